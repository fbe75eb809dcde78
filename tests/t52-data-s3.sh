#!/bin/sh
# t52-data-s3.sh: a job's [data] from s3:// (the Ceph RGW of
# build-aux/test-all), as t51-data.sh does it on file://: a folder and one
# object fetched before the job, by their ETags; a second run fetches
# nothing; an object overwritten in the bucket (a new ETag) is fetched
# again; a prefix with nothing under it fails the run naming the key.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
t_setup
bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"
trap 's3_bucket_rm "$bucket"; t_cleanup' EXIT
s3_spotrun_keys
T=$t_tmp
ep=$SPOTRUN_TEST_S3_ENDPOINT
export HOME=$T/home
mkdir -p "$HOME" "$T/w"
printf 'abc' > "$T/a"
printf 'defg' > "$T/b"
s3_aws s3 cp --quiet "$T/a" "s3://$bucket/set/a.txt"
s3_aws s3 cp --quiet "$T/b" "s3://$bucket/set/sub/b.txt"
cat > "$T/w/job.ini" <<EOF2
[job]
name = d
command = sh -c "cat in/a.txt in/sub/b.txt one"
[provider]
name = local
[data]
in = s3://$bucket/set/?endpoint=$ep
one = s3://$bucket/set/a.txt?endpoint=$ep
EOF2
run() {	# run NAME: spotrun run of the job, output in NAME.out/.err, $rc
	"$SPOTRUN" run "$T/w/job.ini" > "$T/$1.out" 2> "$T/$1.err"
	rc=$?
}
run r1
t_is "$rc|$(cat "$T/r1.out")" "0|abcdefgabc" "s3: the job reads the folder and the object" || t_show "$T/r1.err"
t_like "$T/r1.err" "data +in: 2 fetched \\(7 B\\), 0 cached, 0 removed, [0-9.]+ s\$" "s3: the folder's two objects fetched"
t_like "$T/r1.err" "data +one: 1 fetched \\(3 B\\), 0 cached, 0 removed, [0-9.]+ s\$" "s3: the one object fetched"
run r2
t_like "$T/r2.err" "data +in: 0 fetched \\(0 B\\), 2 cached, 0 removed" "s3: a second run fetches nothing" ||
	t_show "$T/r2.err"
printf 'xyz!' > "$T/a"
s3_aws s3 cp --quiet "$T/a" "s3://$bucket/set/a.txt"
run r3
t_is "$rc|$(cat "$T/r3.out")" "0|xyz!defgxyz!" "s3: an object overwritten in the bucket is read anew" ||
	t_show "$T/r3.err"
t_like "$T/r3.err" "data +in: 1 fetched \\(4 B\\), 1 cached, 0 removed" "s3: only it is fetched (a new ETag)"
sed -i "s|^in = .*|in = s3://$bucket/none/?endpoint=$ep|" "$T/w/job.ini"
run r4
t_is "$rc" 65 "s3: a prefix with nothing under it: exit 65"
t_like "$T/r4.err" "\\[data\\] in = s3://$bucket/none/\\?endpoint=$ep: " "s3: the error names the key and the URL" ||
	t_show "$T/r4.err"
t_done
