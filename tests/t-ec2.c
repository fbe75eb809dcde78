/*
 * t-ec2.c: the AWS engine of `spotrun up` and `down` (cloud/aws/ec2.h).
 * Offline: EC2's error documents and the classes of their codes; SigV4 of
 * a Query API POST against botocore's (when the Python has botocore).
 * Against a canned server on loopback (a child answering each request in
 * turn with a reply of the test's, keeping each request's body): the
 * exact form of CreateLaunchTemplate and CreateFleet, a throttled request
 * retried, a capacity error classified, a fleet's capacity error read from
 * its description; DescribeSpotPriceHistory's exact form, its two pages
 * followed by nextToken, each change read, another zone's dropped, a
 * denial said with AWS's code. Against moto (tests/ec2emu.py, python3 of the PATH): a
 * pool's template and fleet of type maintain over 2 types x 2 zones, its
 * instances and their tags, the target raised, everything found by tag,
 * everything deleted and nothing left, an error document's code and
 * message. Skipped without moto unless SPOTRUN_TEST_REQUIRE_MOTO=1.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "awsauth.h"
#include "ec2.h"
#include "http.h"
#include "store-util.h"
#include "util.h"

static char dir[4096];
static pid_t emu_pid, canned_pid;

static void
cleanup(void)
{
	char *cmd;

	if (emu_pid > 0) {
		kill(emu_pid, SIGTERM);
		waitpid(emu_pid, NULL, 0);
	}
	if (canned_pid > 0) {
		kill(canned_pid, SIGTERM);
		waitpid(canned_pid, NULL, 0);
	}
	if (dir[0] != '\0') {
		cmd = sr_asprintf("rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# cleanup: %s failed\n", cmd);
		free(cmd);
	}
}

/* ---- the canned server: reply i to request i, request i's body kept ---- */

struct canned {
	int status;
	const char *body;
};

static char *
body_path(int i)
{
	return sr_asprintf("%s/req.%d", dir, i);
}

static int
canned_start(const struct canned *r, int n)
{
	struct sockaddr_in a;
	socklen_t al = sizeof a;
	int s, i;

	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		sr_fatal("socket: %s", strerror(errno));
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&a, sizeof a) == -1 || listen(s, 8) == -1 ||
	    getsockname(s, (struct sockaddr *)&a, &al) == -1)
		sr_fatal("listen: %s", strerror(errno));
	fflush(stdout);
	if ((canned_pid = fork()) == -1)
		sr_fatal("fork: %s", strerror(errno));
	if (canned_pid > 0) {
		close(s);
		return ntohs(a.sin_port);
	}
	for (i = 0; i < n; i++) {
		char buf[65536], *end, *cl, *out, *p;
		size_t len = 0, want;
		ssize_t k;
		FILE *f;
		int c = accept(s, NULL, NULL);

		if (c == -1)
			_exit(1);
		for (;;) {
			if ((k = read(c, buf + len, sizeof buf - 1 - len)) <= 0)
				_exit(1);
			len += (size_t)k;
			buf[len] = '\0';
			if ((end = strstr(buf, "\r\n\r\n")) == NULL)
				continue;
			cl = strcasestr(buf, "\r\ncontent-length:");
			want = (size_t)(end + 4 - buf) + (cl != NULL ? strtoul(cl + 17, NULL, 10) : 0);
			if (len >= want)
				break;
		}
		p = body_path(i);
		if ((f = fopen(p, "w")) != NULL) {
			fputs(end + 4, f);
			fclose(f);
		}
		free(p);
		out = sr_asprintf("HTTP/1.1 %d X\r\nContent-Type: text/xml\r\nContent-Length: %zu\r\n"
		    "Connection: close\r\n\r\n%s", r[i].status, strlen(r[i].body), r[i].body);
		if (write(c, out, strlen(out)) < 0)
			_exit(1);
		free(out);
		close(c);
	}
	_exit(0);
}

static void
canned_wait(void)
{
	waitpid(canned_pid, NULL, 0);
	canned_pid = 0;
}

static char *
request_body(int i)
{
	char *p = body_path(i), *b = NULL;
	size_t len;

	if (sr_read_file(p, 1 << 20, &b, &len, NULL) == -1)
		b = sr_strdup("");
	free(p);
	return b;
}

static int
has(const char *body, const char *needle)
{
	char *n = sr_asprintf("&%s&", needle), *b = sr_asprintf("&%s&", body);
	int r = strstr(b, n) != NULL;

	if (!r)
		printf("# no %s in the request\n", needle);
	free(n);
	free(b);
	return r;
}

/* ---- offline ---- */

#define ERR_DOC(code, msg) "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error>" \
	"<Code>" code "</Code><Message>" msg "</Message></Error></Errors>" \
	"<RequestID>ea966190-f9aa-478e-9ede-example</RequestID></Response>"

static void
test_errors(void)
{
	/* AWS's example of an error response (EC2 API reference, "Error
	 * codes"), with each capacity code */
	static const char *const capacity[] = { "InsufficientInstanceCapacity",
		"MaxSpotInstanceCountExceeded", "SpotMaxPriceTooLow", "Unsupported" };
	const char *doc = ERR_DOC("InsufficientInstanceCapacity",
	    "We currently do not have sufficient g5.xlarge capacity in the Availability Zone you "
	    "requested (us-east-1a).");
	char code[64], msg[256];
	size_t i;

	is_int(sr_ec2_parse_error(doc, strlen(doc), code, sizeof code, msg, sizeof msg), 0,
	    "an EC2 error document is read");
	is_str(code, "InsufficientInstanceCapacity", "its code");
	is_str(msg, "We currently do not have sufficient g5.xlarge capacity in the Availability "
	    "Zone you requested (us-east-1a).", "its message");
	for (i = 0; i < SR_ARRAY_LEN(capacity); i++)
		is_int(sr_ec2_classify(capacity[i]), SR_EC2_CAPACITY, "%s: a capacity error",
		    capacity[i]);
	is_int(sr_ec2_classify("InvalidParameterValue"), SR_EC2_ERROR,
	    "InvalidParameterValue: no failover");
	is_int(sr_ec2_classify("InsufficientInstanceCapacityX"), SR_EC2_ERROR,
	    "a code is matched whole");
	is_int(sr_ec2_classify(""), SR_EC2_OK, "no code: no error");
	is_int(sr_ec2_parse_error("<a><b/></a>", 11, code, sizeof code, msg, sizeof msg), -1,
	    "another document is no error document");
	is_str(code, "", "... and leaves no code");
	is_int(sr_ec2_parse_error("not xml", 7, code, sizeof code, msg, sizeof msg), -1,
	    "nor is text");
}

/* The Authorization header the python program py prints (botocore's)
 * is got, or a skip where botocore is missing. */
static void
botocore_is(const char *py, const char *got, const char *what)
{
	char want[1100] = "";
	FILE *f;

	if ((f = popen(py, "r")) == NULL || fgets(want, sizeof want, f) == NULL) {
		if (f != NULL)
			pclose(f);
		tap_skip("botocore is not in python3: SigV4 not compared with its");
		return;
	}
	pclose(f);
	want[strcspn(want, "\n")] = '\0';
	is_str(got, want, "%s", what);
}

static void
test_sigv4(void)
{
	struct sr_aws_post p = { "127.0.0.1:4567", "/",
		"application/x-www-form-urlencoded; charset=utf-8",
		"Action=DescribeFleets&Version=2016-11-15", 40, "us-east-1", "ec2", NULL };
	struct sr_aws_signed sg;
	char e[SR_ERRMAX];
	const char *py = "python3 -c '"
	    "import datetime, botocore.auth as a, botocore.awsrequest as r, botocore.credentials as c\n"
	    "a.get_current_datetime = lambda: datetime.datetime(2026, 1, 2, 3, 4, 5)\n"
	    "q = r.AWSRequest(method=\"POST\", url=\"http://127.0.0.1:4567/\", "
	    "data=b\"Action=DescribeFleets&Version=2016-11-15\", headers={\"Content-Type\": "
	    "\"application/x-www-form-urlencoded; charset=utf-8\"})\n"
	    "a.SigV4Auth(c.Credentials(\"AKIDEXAMPLE\", \"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\", "
	    "\"tok/en+\"), \"ec2\", \"us-east-1\").add_auth(q)\n"
	    "print(q.headers[\"Authorization\"])' 2>/dev/null";

	ok(sr_aws_sign_post(&p, 1767323045, "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
	    "tok/en+", &sg, e) == 0, "a Query API POST is signed");
	is_str(sg.amz_date, "20260102T030405Z", "at the time given");
	is_str(sg.token, "tok/en+", "with the session token");
	botocore_is(py, sg.auth, "the Authorization botocore computes");
}

/* SSM's JSON protocol: X-Amz-Target signed too, as botocore signs it. */
static void
test_sigv4_json(void)
{
	struct sr_aws_post p = { "127.0.0.1:4567", "/", "application/x-amz-json-1.1",
		"{\"Name\":\"/aws/service/x\"}", 25, "us-east-1", "ssm", "AmazonSSM.GetParameter" };
	struct sr_aws_signed sg;
	char e[SR_ERRMAX];
	const char *py = "python3 -c '"
	    "import datetime, botocore.auth as a, botocore.awsrequest as r, botocore.credentials as c\n"
	    "a.get_current_datetime = lambda: datetime.datetime(2026, 1, 2, 3, 4, 5)\n"
	    "q = r.AWSRequest(method=\"POST\", url=\"http://127.0.0.1:4567/\", "
	    "data=b\"{\\\"Name\\\":\\\"/aws/service/x\\\"}\", headers={\"Content-Type\": "
	    "\"application/x-amz-json-1.1\", \"X-Amz-Target\": \"AmazonSSM.GetParameter\"})\n"
	    "a.SigV4Auth(c.Credentials(\"AKIDEXAMPLE\", \"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\", "
	    "None), \"ssm\", \"us-east-1\").add_auth(q)\n"
	    "print(q.headers[\"Authorization\"])' 2>/dev/null";

	ok(sr_aws_sign_post(&p, 1767323045, "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
	    NULL, &sg, e) == 0, "an SSM POST is signed");
	ok(strstr(sg.auth, "SignedHeaders=content-type;host;x-amz-date;x-amz-target,") != NULL,
	    "X-Amz-Target among the signed headers");
	botocore_is(py, sg.auth, "the Authorization botocore computes, X-Amz-Target signed");
}

/* ---- the canned server ---- */

static struct sr_ec2 *
client_at(int port)
{
	struct sr_ec2_opts o;
	struct sr_ec2 *c;
	char ep[64], e[SR_ERRMAX];

	snprintf(ep, sizeof ep, "http://127.0.0.1:%d", port);
	memset(&o, 0, sizeof o);
	o.endpoint = ep;
	o.no_imds = 1;
	o.timeout = 20;
	if (sr_ec2_open(&o, &c, e) == -1)
		sr_fatal("%s", e);
	return c;
}

static void
test_canned(void)
{
	static const struct sr_ec2_override ov[] = { { "g5.xlarge", "subnet-a", NULL },
		{ "g5.xlarge", "subnet-b", NULL }, { "g6.xlarge", NULL, "us-east-1a" },
		{ "g6.xlarge", NULL, "us-east-1b" } };
	static const char *const sgs[] = { "sg-1", NULL };
	const struct canned r[] = {
		{ 200, "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-0abc"
		    "</launchTemplateId></launchTemplate></CreateLaunchTemplateResponse>" },
		{ 503, ERR_DOC("RequestLimitExceeded", "Request limit exceeded.") },
		{ 200, "<CreateFleetResponse><fleetId>fleet-1</fleetId></CreateFleetResponse>" },
		{ 500, ERR_DOC("InsufficientInstanceCapacity", "There is no Spot capacity "
		    "available that matches your request.") },
		{ 200, "<DescribeFleetsResponse><fleetSet><item><fleetId>fleet-1</fleetId>"
		    "<fleetState>active</fleetState><type>maintain</type><targetCapacitySpecification>"
		    "<totalTargetCapacity>2</totalTargetCapacity></targetCapacitySpecification>"
		    "<fulfilledCapacity>0.0</fulfilledCapacity><errorSet><item><errorCode>"
		    "SpotMaxPriceTooLow</errorCode><errorMessage>Your max price is below the Spot "
		    "price.</errorMessage></item></errorSet><tagSet><item><key>spotrun:pool</key>"
		    "<value>p1</value></item></tagSet></item></fleetSet></DescribeFleetsResponse>" },
		{ 400, "<html>no</html>" },
	};
	struct sr_ec2_template_spec ts;
	struct sr_ec2_fleet_spec fs;
	struct sr_ec2_fleet fl;
	struct sr_ec2 *c = client_at(canned_start(r, (int)SR_ARRAY_LEN(r)));
	char id[64], e[SR_ERRMAX], *b;

	memset(&ts, 0, sizeof ts);
	ts.name = "spotrun-p1";
	ts.pool = "p1";
	ts.queue = "s3://bucket/q";
	ts.image_id = "ami-1";
	ts.user_data = "#!/bin/sh\necho hi\n";
	ts.user_data_len = 18;
	ts.instance_profile = "spotrun-agent";
	ts.volume_gb = 200;
	ts.security_groups = sgs;
	is_int(sr_ec2_create_template(c, &ts, id, e), SR_EC2_OK, "create template");
	is_str(id, "lt-0abc", "its id from the reply");
	b = request_body(0);
	ok(has(b, "Action=CreateLaunchTemplate") && has(b, "LaunchTemplateName=spotrun-p1") &&
	    has(b, "LaunchTemplateData.InstanceInitiatedShutdownBehavior=terminate") &&
	    has(b, "LaunchTemplateData.UserData=IyEvYmluL3NoCmVjaG8gaGkK") &&
	    has(b, "LaunchTemplateData.IamInstanceProfile.Name=spotrun-agent") &&
	    has(b, "LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeSize=200") &&
	    has(b, "LaunchTemplateData.BlockDeviceMapping.1.Ebs.DeleteOnTermination=true") &&
	    has(b, "LaunchTemplateData.SecurityGroupId.1=sg-1") &&
	    has(b, "LaunchTemplateData.TagSpecification.1.ResourceType=instance") &&
	    has(b, "LaunchTemplateData.TagSpecification.2.ResourceType=volume") &&
	    has(b, "LaunchTemplateData.TagSpecification.2.Tag.2.Value=s3%3A%2F%2Fbucket%2Fq") &&
	    has(b, "TagSpecification.1.ResourceType=launch-template") &&
	    has(b, "TagSpecification.1.Tag.1.Key=spotrun%3Apool") &&
	    has(b, "TagSpecification.1.Tag.1.Value=p1") && has(b, "Version=2016-11-15"),
	    "the template: user-data in base64, terminate on shutdown, tags on it, "
	    "its instances and volumes");
	free(b);

	memset(&fs, 0, sizeof fs);
	fs.pool = "p1";
	fs.queue = "s3://bucket/q";
	fs.template_id = "lt-0abc";
	fs.target = 2;
	fs.max_total_price = "3.50";
	fs.overrides = ov;
	fs.noverrides = SR_ARRAY_LEN(ov);
	fs.client_token = "tok-1";
	is_int(sr_ec2_create_fleet(c, &fs, id, e), SR_EC2_OK,
	    "create fleet: a throttled request is tried again");
	is_str(id, "fleet-1", "its id from the reply");
	b = request_body(2);
	ok(has(b, "Action=CreateFleet") && has(b, "Type=maintain") && has(b, "ClientToken=tok-1") &&
	    has(b, "SpotOptions.AllocationStrategy=price-capacity-optimized") &&
	    has(b, "SpotOptions.MaxTotalPrice=3.50") && has(b, "ReplaceUnhealthyInstances=true") &&
	    has(b, "TargetCapacitySpecification.TotalTargetCapacity=2") &&
	    has(b, "TargetCapacitySpecification.DefaultTargetCapacityType=spot") &&
	    has(b, "LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId=lt-0abc") &&
	    has(b, "LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version=%24Latest") &&
	    has(b, "LaunchTemplateConfigs.1.Overrides.2.SubnetId=subnet-b") &&
	    has(b, "LaunchTemplateConfigs.1.Overrides.4.InstanceType=g6.xlarge") &&
	    has(b, "LaunchTemplateConfigs.1.Overrides.4.AvailabilityZone=us-east-1b") &&
	    has(b, "LaunchTemplateConfigs.1.Overrides.4.Priority=4") &&
	    has(b, "TagSpecification.1.ResourceType=fleet"),
	    "the fleet: maintain, spot, price-capacity-optimized, the overrides in order");
	free(b);

	is_int(sr_ec2_create_fleet(c, &fs, id, e), SR_EC2_CAPACITY,
	    "a capacity error is told by its code");
	is_str(e, "create fleet for pool p1: InsufficientInstanceCapacity: There is no Spot "
	    "capacity available that matches your request.", "with AWS's code and message");
	is_int(sr_ec2_describe_fleet(c, "fleet-1", &fl, e), SR_EC2_OK, "describe fleet");
	ok(strcmp(fl.state, "active") == 0 && fl.target == 2 && strcmp(fl.pool, "p1") == 0,
	    "its state, target and pool");
	is_str(fl.error_code, "SpotMaxPriceTooLow", "the error it reports launching");
	is_int(fl.error_class, SR_EC2_CAPACITY, "... a capacity error");
	is_int(sr_ec2_modify_fleet(c, "fleet-1", 3, e), SR_EC2_ERROR,
	    "a 400 without an error document fails");
	ok(strstr(e, "modify fleet fleet-1: HTTP 400 from http://127.0.0.1:") == e,
	    "... saying so: %s", e);
	canned_wait();
	sr_ec2_close(c);
}

/* DescribeSpotPriceHistory (sr_ec2_spot_price_history), on the canned server. */
static void
test_spot_prices(void)
{
#define PRICE_ITEM(zone, price, ts) "<item><instanceType>g5.xlarge</instanceType>" \
	"<productDescription>Linux/UNIX</productDescription><spotPrice>" price "</spotPrice>" \
	"<timestamp>" ts "</timestamp><availabilityZone>" zone "</availabilityZone></item>"
	const struct canned r[] = {
		{ 200, "<DescribeSpotPriceHistoryResponse><requestId>r1</requestId>"
		    "<spotPriceHistorySet>"
		    PRICE_ITEM("us-east-1a", "0.371200", "2025-01-02T03:04:05.000Z")
		    PRICE_ITEM("us-east-1b", "0.900000", "2025-01-02T03:00:00.000Z")
		    "</spotPriceHistorySet><nextToken>tok/2</nextToken>"
		    "</DescribeSpotPriceHistoryResponse>" },
		{ 200, "<DescribeSpotPriceHistoryResponse><requestId>r2</requestId>"
		    "<spotPriceHistorySet>"
		    PRICE_ITEM("us-east-1a", "0.350000", "2025-01-01T00:00:00.000Z")
		    "</spotPriceHistorySet><nextToken/></DescribeSpotPriceHistoryResponse>" },
		{ 403, ERR_DOC("UnauthorizedOperation", "You are not authorized to perform this "
		    "operation.") },
	};
#undef PRICE_ITEM
	struct sr_ec2 *c = client_at(canned_start(r, (int)SR_ARRAY_LEN(r)));
	struct sr_ec2_spot_price *h = NULL;
	char e[SR_ERRMAX], *b;
	size_t n = 9;

	is_int(sr_ec2_spot_price_history(c, "g5.xlarge", "us-east-1a", "2025-01-02T00:00:00Z",
	    "2025-01-03T00:00:00Z", &h, &n, e), SR_EC2_OK, "spot price history: two pages");
	b = request_body(0);
	ok(has(b, "Action=DescribeSpotPriceHistory") && has(b, "InstanceType.1=g5.xlarge") &&
	    has(b, "ProductDescription.1=Linux%2FUNIX") &&
	    has(b, "Filter.1.Name=availability-zone") && has(b, "Filter.1.Value.1=us-east-1a") &&
	    has(b, "StartTime=2025-01-02T00%3A00%3A00Z") &&
	    has(b, "EndTime=2025-01-03T00%3A00%3A00Z") && has(b, "Version=2016-11-15") &&
	    strstr(b, "NextToken") == NULL,
	    "the first page asked: the type, Linux/UNIX, the zone, start and end");
	free(b);
	b = request_body(1);
	ok(has(b, "Action=DescribeSpotPriceHistory") && has(b, "NextToken=tok%2F2") &&
	    has(b, "Filter.1.Value.1=us-east-1a"), "the second page asked with the nextToken");
	free(b);
	is_int(n, 2, "the zone's two changes, the other zone's dropped");
	if (n == 2) {
		ok(strcmp(h[0].type, "g5.xlarge") == 0 && strcmp(h[0].zone, "us-east-1a") == 0 &&
		    strcmp(h[0].product, "Linux/UNIX") == 0 &&
		    strcmp(h[0].timestamp, "2025-01-02T03:04:05.000Z") == 0 &&
		    h[0].price == 0.3712, "the first change: type, zone, product, time, $0.3712");
		ok(strcmp(h[1].timestamp, "2025-01-01T00:00:00.000Z") == 0 && h[1].price == 0.35,
		    "the second, from the second page: $0.35 since 2025-01-01");
	}
	free(h);
	h = NULL;
	is_int(sr_ec2_spot_price_history(c, "g5.xlarge", "us-east-1a", "2025-01-02T00:00:00Z",
	    "2025-01-03T00:00:00Z", &h, &n, e), SR_EC2_ERROR, "a denied history fails");
	is_str(e, "read the spot price history of g5.xlarge in us-east-1a: UnauthorizedOperation: "
	    "You are not authorized to perform this operation.", "... with AWS's code and message");
	ok(h == NULL && n == 0, "... and nothing read");
	canned_wait();
	sr_ec2_close(c);
}

/* ---- moto ---- */

static int
moto_start(void)
{
	char *portfile = sr_asprintf("%s/port", dir), *emu;
	const char *top = getenv("top_srcdir");
	int port;

	emu = sr_asprintf("%s/tests/ec2emu.py", top != NULL && top[0] != '\0' ? top : SR_TOP_SRCDIR);
	{
		const char *argv[] = { "/usr/bin/env", "python3", emu, "--port-file", portfile, NULL };

		port = su_server_start(argv, portfile, 30, emu, "", &emu_pid);
	}
	free(portfile);
	free(emu);
	return port;
}

static void
test_moto(void)
{
	static const struct sr_ec2_override ov[] = { { "g5.xlarge", NULL, "us-east-1a" },
		{ "g5.xlarge", NULL, "us-east-1b" }, { "g6.xlarge", NULL, "us-east-1a" },
		{ "g6.xlarge", NULL, "us-east-1b" } };
	struct sr_ec2_template_spec ts;
	struct sr_ec2_fleet_spec fs;
	struct sr_ec2_fleet fl;
	struct sr_ec2_instance *in;
	struct sr_ec2_found f;
	struct sr_ec2 *c;
	char lt[64], lt2[64], fid[64], e[SR_ERRMAX];
	size_t n, i, gone;
	int good;

	c = client_at(moto_start());
	memset(&ts, 0, sizeof ts);
	ts.name = "spotrun-p1";
	ts.pool = "p1";
	ts.queue = "s3://bucket/q";
	ts.image_id = "ami-12c6146b";	/* one of moto's */
	ts.user_data = "#cloud-config\n";
	ts.user_data_len = 14;
	ts.volume_gb = 100;
	if (!ok(sr_ec2_create_template(c, &ts, lt, e) == SR_EC2_OK && strncmp(lt, "lt-", 3) == 0,
	    "moto: create template"))
		tap_diag("%s", e);
	ts.name = "spotrun-other";
	ts.pool = "other";
	ok(sr_ec2_create_template(c, &ts, lt2, e) == SR_EC2_OK, "... and another pool's");

	memset(&fs, 0, sizeof fs);
	fs.pool = "p1";
	fs.queue = "s3://bucket/q";
	fs.template_id = lt;
	fs.target = 2;
	fs.overrides = ov;
	fs.noverrides = SR_ARRAY_LEN(ov);
	if (!ok(sr_ec2_create_fleet(c, &fs, fid, e) == SR_EC2_OK && strncmp(fid, "fleet-", 6) == 0,
	    "create fleet: maintain, 2 types x 2 zones, target 2"))
		tap_diag("%s", e);
	ok(sr_ec2_describe_fleet(c, fid, &fl, e) == SR_EC2_OK && strcmp(fl.state, "active") == 0 &&
	    strcmp(fl.type, "maintain") == 0 && fl.target == 2 && strcmp(fl.pool, "p1") == 0 &&
	    strcmp(fl.queue, "s3://bucket/q") == 0 && fl.error_class == SR_EC2_OK,
	    "describe fleet: active, maintain, target 2, tagged");
	is_int(sr_ec2_fleet_instances(c, fid, &in, &n, e), SR_EC2_OK, "its instances");
	is_int(n, 2, "2 of them");
	for (i = 0, good = 1; i < n; i++)
		good &= strncmp(in[i].id, "i-", 2) == 0 && strcmp(in[i].pool, "p1") == 0 &&
		    strcmp(in[i].queue, "s3://bucket/q") == 0 && strcmp(in[i].state, "running") == 0 &&
		    strcmp(in[i].lifecycle, "spot") == 0 && in[i].launch_time[0] != '\0' &&
		    in[i].zone[0] != '\0' && (strcmp(in[i].type, "g5.xlarge") == 0 ||
		    strcmp(in[i].type, "g6.xlarge") == 0);
	ok(good, "each running, spot, of an allowed type, with a zone and launch time, "
	    "tagged with the pool and queue through the template");
	free(in);

	is_int(sr_ec2_modify_fleet(c, fid, 3, e), SR_EC2_OK, "modify the target to 3");
	ok(sr_ec2_fleet_instances(c, fid, &in, &n, e) == SR_EC2_OK && n == 3, "3 instances");
	free(in);

	is_int(sr_ec2_find_pool(c, "p1", &f, e), SR_EC2_OK, "find the pool by tag");
	ok(f.nfleets == 1 && strcmp(f.fleets[0].id, fid) == 0, "its fleet");
	ok(f.ntemplates == 1 && strcmp(f.templates[0].id, lt) == 0, "its template, not another's");
	is_int(f.ninstances, 3, "its 3 instances");
	sr_ec2_found_free(&f);

	is_int(sr_ec2_delete_pool(c, "p1", &gone, e), SR_EC2_OK, "delete the pool");
	is_int(gone, 5, "a fleet, 3 instances, a template");
	is_int(sr_ec2_find_pool(c, "p1", &f, e), SR_EC2_OK, "find it again");
	ok(f.nfleets == 0 && f.ntemplates == 0 && f.ninstances == 0,
	    "nothing left: no fleet active, no template, no instance");
	sr_ec2_found_free(&f);
	ok(sr_ec2_describe_fleet(c, fid, &fl, e) == SR_EC2_OK &&
	    strncmp(fl.state, "deleted", 7) == 0, "the fleet is %s", fl.state);
	is_int(sr_ec2_find_pool(c, "other", &f, e), SR_EC2_OK, "the other pool");
	ok(f.ntemplates == 1 && strcmp(f.templates[0].id, lt2) == 0, "... keeps its template");
	sr_ec2_found_free(&f);

	fs.template_id = "lt-0nothere";
	is_int(sr_ec2_create_fleet(c, &fs, fid, e), SR_EC2_ERROR, "a fleet on no template fails");
	is_str(e, "create fleet for pool p1: InvalidLaunchTemplateId.NotFound: The specified launch "
	    "template, with template ID lt-0nothere, does not exist.",
	    "with moto's code and message, exactly");
	is_int(sr_ec2_delete_template(c, "lt-0nothere", e), SR_EC2_ERROR, "delete no template");
	ok(strncmp(e, "delete launch template lt-0nothere: InvalidLaunchTemplate", 57) == 0,
	    "... %s", e);
	sr_ec2_close(c);
}

int
main(void)
{
	char e[SR_ERRMAX];
	int moto;

	snprintf(dir, sizeof dir, "%s/t-ec2.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	if (sr_http_init(e) == -1)
		sr_fatal("%s", e);
	/* keys of the test's own, nothing of the user's, no instance role */
	setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_PROFILE");
	setenv("AWS_REGION", "us-east-1", 1);
	setenv("AWS_CONFIG_FILE", "/dev/null", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null", 1);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	unsetenv("SPOTRUN_EC2_ENDPOINT");
	unsetenv("AWS_ENDPOINT_URL_EC2");

	test_errors();
	test_sigv4();
	test_sigv4_json();
	test_canned();
	test_spot_prices();
	moto = system("python3 -c 'import moto' >/dev/null 2>&1") == 0;
	if (moto)
		test_moto();
	else if (getenv("SPOTRUN_TEST_REQUIRE_MOTO") != NULL &&
	    strcmp(getenv("SPOTRUN_TEST_REQUIRE_MOTO"), "1") == 0)
		ok(0, "moto is not installed in this Python (python3 -m moto.server)");
	else
		tap_skip("moto is not installed in this Python (python3 -m moto.server)");
	sr_http_cleanup();
	return tap_done();
}
