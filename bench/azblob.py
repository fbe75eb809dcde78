#!/usr/bin/python3
"""azblob.py: bench/azure.sh's baseline client - the Azure SDK for Python
(Debian's python3-azure, the SDK under the Azure CLI) streaming a blob from
stdin or to stdout, as `aws s3 cp -` does for S3. The Azure CLI itself
cannot take a pipe: `az storage blob upload --file /dev/stdin` sizes the
file with os.path.getsize, which is 0 for a pipe, and uploads nothing.

  azblob.py put CONTAINER NAME    stdin -> a block blob (blocks of 4 MiB,
                                  the SDK's default, N at once)
  azblob.py get CONTAINER NAME    the blob -> stdout (in the SDK's chunks,
                                  one after another)
  azblob.py size CONTAINER PREFIX the sum of the sizes of the blobs under it
  azblob.py rm CONTAINER          delete every blob in it
  azblob.py mk CONTAINER          create it

The account, key and endpoint come from the environment (AZ_ACCOUNT,
AZ_KEY, AZ_ENDPOINT: tests/azurite.sh's SPOTRUN_TEST_AZ_*), never argv;
N from AZ_CONCURRENCY (default 2, the Azure CLI's --max-connections).
"""
import os
import sys

from azure.storage.blob import BlobServiceClient


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    conn = ("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s;"
            % (os.environ["AZ_ACCOUNT"], os.environ["AZ_KEY"], os.environ["AZ_ENDPOINT"]))
    n = int(os.environ.get("AZ_CONCURRENCY", "2"))
    svc = BlobServiceClient.from_connection_string(conn)
    op, cont = sys.argv[1], svc.get_container_client(sys.argv[2])
    if op == "put":
        cont.upload_blob(sys.argv[3], sys.stdin.buffer, overwrite=True, max_concurrency=n)
    elif op == "get":
        # readinto takes a pipe only with one connection: chunks() streams
        for piece in cont.download_blob(sys.argv[3], max_concurrency=n).chunks():
            sys.stdout.buffer.write(piece)
    elif op == "size":
        print(sum(b.size for b in cont.list_blobs(name_starts_with=sys.argv[3])))
    elif op == "rm":
        for b in list(cont.list_blobs()):
            cont.delete_blob(b.name)
    elif op == "mk":
        cont.create_container()
    else:
        sys.exit("azblob.py: unknown operation %s\n%s" % (op, __doc__))


if __name__ == "__main__":
    main()
