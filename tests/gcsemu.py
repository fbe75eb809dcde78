#!/usr/bin/python3
# gcsemu.py: an emulator of Google Cloud Storage's XML API, for spotrun's
# gs:// tests (there is no GCS to reach from a test machine). Python 3
# standard library only; in-memory; HTTP on 127.0.0.1 at a port the kernel
# chooses, written to --port-file once the server listens.
#
# What it emulates, as GCS answers it (the XML API reference,
# https://cloud.google.com/storage/docs/xml-api/overview and the pages under
# it: reference-headers, get-object, put-object, delete-object, get-bucket-list,
# post-object-multipart, put-object-multipart, post-object-complete,
# delete-multipart; HMAC keys and V4 signing:
# https://cloud.google.com/storage/docs/authentication/hmackeys and
# https://cloud.google.com/storage/docs/authentication/signatures; request
# preconditions: https://cloud.google.com/storage/docs/request-preconditions;
# errors: https://cloud.google.com/storage/docs/xml-api/reference-status):
#
#  - path-style requests /BUCKET/KEY; buckets given by --bucket; a missing
#    one -> 404 NoSuchBucket;
#  - AWS SigV4 (AWS4-HMAC-SHA256) in the Authorization header, checked
#    against the HMAC keys of --keys: scope DATE/auto/s3/aws4_request; an
#    unknown access id -> 403 InvalidAccessKeyId; a wrong signature -> 403
#    SignatureDoesNotMatch (with StringToSign and CanonicalRequest, as GCS
#    sends them); x-amz-date (or x-goog-date) within 15 minutes, else 403
#    RequestTimeTooSkewed; the payload hash from x-amz-content-sha256 (or
#    x-goog-content-sha256; absent = UNSIGNED-PAYLOAD, as GCS takes it),
#    a hash must be the body's (400 XAmzContentSHA256Mismatch); every
#    x-amz-* and x-goog-* header sent must be signed;
#  - objects with a generation (an increasing microsecond time stamp) in
#    x-goog-generation and x-goog-metageneration: 1, ETag = the quoted MD5
#    of a single upload, x-goog-hash: crc32c=...,md5=... (base64; composite
#    objects have no md5), x-goog-stored-content-length;
#  - PUT with Content-MD5 (400 BadDigest / InvalidDigest) and the
#    precondition x-goog-if-generation-match (0: the object must not exist;
#    N: its generation must be N; else 412 PreconditionFailed), also on
#    GET, HEAD and DELETE;
#  - GET with Range: bytes=a-b, a-, -n (206, Content-Range; a start at or
#    past the end -> 416 InvalidRange); HEAD (no body, 404 without one);
#  - DELETE (204; a missing object -> 404 NoSuchKey, unlike S3);
#  - listing: GET /BUCKET?list-type=2 (prefix, delimiter, max-keys up to
#    1000, continuation-token / NextContinuationToken, start-after,
#    encoding-type=url) and the V1 form (marker / NextMarker); Contents
#    with Key, Generation, MetaGeneration, LastModified, ETag, Size;
#  - multipart uploads: POST ?uploads, PUT ?partNumber&uploadId (Content-MD5
#    checked), POST ?uploadId with CompleteMultipartUpload (parts in
#    ascending order with their ETags; every part but the last >= 5 MiB,
#    else 400 EntityTooSmall), DELETE ?uploadId, GET /BUCKET?uploads;
#  - with --object-rate SECONDS, GCS's limit on writes to one object name
#    ("one write per second to the same object name", Cloud Storage's
#    quotas page; https://cloud.google.com/storage/docs/gcs429): a create,
#    update or delete of a name (PUT, DELETE, completing a multipart upload)
#    less than SECONDS after the last one that changed it is refused with
#    429 and the XML API's body (Code SlowDown, the Message and Details GCS
#    sends, the object named as BUCKET/KEY in Details). A refused write
#    changes nothing and does not restart the window. GCS does not say
#    whether a short burst passes (here none does) or whether a write whose
#    precondition fails counts: here it does not, it is answered 412 at any
#    rate, since it changes nothing (the other reading starves a claimer of
#    a lease renewed every second: doc/fleet.md, "Writes per object").
#
# What it does not: the JSON API, resumable uploads, virtual-hosted
# addressing, bucket creation or metadata, ACLs and IAM, object metadata
# other than Content-Type, copy and compose, versioned reads (?generation=),
# x-goog-if-metageneration-match, SigV2 and query-string (signed URL)
# authentication, GCS's own GOOG4-HMAC-SHA256 algorithm, and TLS. Where
# GCS's answer is undocumented, it refuses loudly rather than guess:
# POST /BUCKET?delete (S3's DeleteObjects; the XML API has no multi-object
# delete) -> 501 NotImplemented; S3's conditional writes (If-None-Match /
# If-Match on PUT; GCS's XML API takes x-goog-if-generation-match instead)
# -> 501 NotImplemented, so that a client relying on them is caught instead
# of silently overwriting. Only the region "auto" is taken in the scope
# (400 AuthorizationHeaderMalformed otherwise). The ETag of a completed
# multipart upload is S3-style, "MD5-OF-PART-MD5S-N".
#
# Usage: gcsemu.py --port-file FILE --keys FILE [--bucket NAME]... [--log FILE]
#                  [--ua-log FILE] [--log-times] [--object-rate SECONDS]
#   --keys FILE: HMAC key pairs, one "ACCESS_ID SECRET" a line (a file, so no
#   secret is on a command line). --log FILE: one line per request:
#   "METHOD PATH?QUERY [x-goog-if-generation-match=V] STATUS
#   [x-goog-generation=G]", the last when the reply carries a generation;
#   --log-times adds " t=SECONDS" (the wall clock, to the microsecond: when
#   the request changed the object, else when its reply was sent). --object-rate SECONDS: the limit above (0, the
#   default: none).
#   --ua-log FILE: one line per request, "METHOD PATH?QUERY USER-AGENT" ("-"
#   when the request has none): who asked, as a server's access log says.
# The emulator exits when its parent process does (it never outlives a test).
#
#        gcsemu.py --check-log FILE [--object-rate SECONDS]
#   reads a log written with --log-times and prints
#   "writes=N refused=R unanswered=U close=C": the writes that changed an
#   object (PUT, DELETE, a multipart completion, answered 2xx), the 429s,
#   those 429s after which the same request (method, path, precondition) was
#   never answered otherwise (given up on), and the pairs of changes of one
#   object less than SECONDS apart (0 while the emulator enforced the
#   limit); then one line for each of the first few unanswered or close
#   ones.

import argparse
import base64
import binascii
import datetime
import hashlib
import hmac
import http.server
import os
import secrets
import socketserver
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
from email.utils import formatdate

MIN_PART = 5 * 1024 * 1024	# GCS's (and S3's) smallest part but the last
MAX_PARTS = 10000
MAX_KEYS = 1000
SKEW = 15 * 60			# seconds of clock difference GCS allows
XMLDECL = "<?xml version='1.0' encoding='UTF-8'?>"
NS = "http://doc.s3.amazonaws.com/2006-03-01"


# ---- CRC32C (Castagnoli), for x-goog-hash; two bytes a step ----

def _crc_tables():
	t1 = []
	for i in range(256):
		c = i
		for _ in range(8):
			c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
		t1.append(c)
	t2 = []
	for i in range(65536):
		c = t1[i & 0xff] ^ (i >> 8)
		t2.append(t1[c & 0xff] ^ (c >> 8))
	return t1, t2


CRC_T1, CRC_T2 = _crc_tables()


def crc32c(data):
	c = 0xffffffff
	t1, t2 = CRC_T1, CRC_T2
	n = len(data) & ~1
	for w in memoryview(data)[:n].cast("H") if sys.byteorder == "little" else ():
		c = t2[(c ^ w) & 0xffff] ^ (c >> 16)
	for b in (data[n:] if sys.byteorder == "little" else data):
		c = t1[(c ^ b) & 0xff] ^ (c >> 8)
	return c ^ 0xffffffff


def b64(raw):
	return base64.b64encode(raw).decode()


def xml_text(s):
	return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def iso_time(t):
	d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
	return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (d.microsecond // 1000)


class GcsError(Exception):
	def __init__(self, status, code, message, details="", extra=None):
		super().__init__(code)
		self.status = status
		self.code = code
		self.message = message
		self.details = details
		self.extra = extra or []	# (element, text) after Details


class Obj:
	def __init__(self, data, generation, content_type, md5=None, etag=None):
		self.data = data
		self.generation = generation
		self.content_type = content_type
		self.md5 = md5			# raw 16 bytes; None: composite
		self.etag = etag if etag is not None else md5.hex()
		self.mtime = time.time()
		self._crc = None

	def hash_header(self):
		if self._crc is None:
			self._crc = b64(crc32c(self.data).to_bytes(4, "big"))
		h = "crc32c=" + self._crc
		if self.md5 is not None:
			h += ",md5=" + b64(self.md5)
		return h


class Store:
	"""Buckets, objects and multipart uploads, under one lock."""

	def __init__(self, buckets, rate=0.0):
		self.lock = threading.Lock()
		self.buckets = {b: {} for b in buckets}
		self.uploads = {}		# id -> dict(bucket, key, ctype, parts, started)
		self.last_gen = 0
		self.rate = rate		# --object-rate: seconds between writes of a name
		self.mutated = {}		# (bucket, key) -> time.monotonic() of its last write

	def next_generation(self):
		# like GCS's: a microsecond time stamp, strictly increasing
		self.last_gen = max(int(time.time() * 1e6), self.last_gen + 1)
		return self.last_gen


RATE_MESSAGE = ("exceeded the rate limit for object mutation operations (create, update, "
    "and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429.")


def check_rate(store, bucket, key):
	"""Refuse a write to bucket/key inside the --object-rate window (call
	with store.lock held)."""
	if store.rate <= 0:
		return
	last = store.mutated.get((bucket, key))
	if last is not None and time.monotonic() - last < store.rate:
		raise GcsError(429, "SlowDown", "The object " + RATE_MESSAGE,
		    "The object %s/%s %s" % (bucket, key, RATE_MESSAGE))


def mutated(store, bucket, key):
	"""Start bucket/key's window (store.lock held); the wall clock then, which
	the log gives as the write's time."""
	if store.rate > 0:
		store.mutated[(bucket, key)] = time.monotonic()
	return time.time()


def gen_match(headers):
	"""The x-goog-if-generation-match precondition, or None."""
	v = headers.get("x-goog-if-generation-match")
	if v is None:
		return None
	v = v.strip()
	if not v.isdigit():
		raise GcsError(400, "InvalidArgument", "Invalid argument.",
		    "Invalid x-goog-if-generation-match: " + v)
	return int(v)


def check_precondition(want, obj):
	if want is None:
		return
	if (want == 0 and obj is not None) or (want != 0 and (obj is None or obj.generation != want)):
		raise GcsError(412, "PreconditionFailed",
		    "At least one of the pre-conditions you specified did not hold.",
		    "x-goog-if-generation-match: %d" % want)


class Handler(http.server.BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"
	server_version = "UploadServer"
	sys_version = ""

	def log_message(self, fmt, *args):
		pass	# our own log, one line per request (log_request below)

	def do_GET(self):
		self.serve()

	def do_HEAD(self):
		self.serve()

	def do_PUT(self):
		self.serve()

	def do_POST(self):
		self.serve()

	def do_DELETE(self):
		self.serve()

	# ---- plumbing ----

	def read_body(self):
		if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
			out = bytearray()
			while True:
				size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
				if size == 0:
					while self.rfile.readline() not in (b"\r\n", b"\n", b""):
						pass
					return bytes(out)
				out += self.rfile.read(size)
				self.rfile.readline()
		n = int(self.headers.get("Content-Length") or 0)
		return self.rfile.read(n) if n > 0 else b""

	def reply(self, status, body=b"", headers=None):
		self.status = status
		self.send_response(status)
		for k, v in (headers or []):
			self.send_header(k, v)
			if k == "x-goog-generation":
				self.reply_gen = v
		if status != 204:
			self.send_header("Content-Length", str(len(body)))
		# logged before the client can see the reply, so that a test reading
		# the log after a request finds its line
		self.log_request_line()
		self.end_headers()
		if self.command != "HEAD" and status != 204:
			self.wfile.write(body)

	def reply_error(self, e):
		extra = "".join("<%s>%s</%s>" % (k, xml_text(v), k) for k, v in e.extra)
		body = (XMLDECL + "<Error><Code>%s</Code><Message>%s</Message><Details>%s</Details>%s"
		    "</Error>" % (e.code, xml_text(e.message), xml_text(e.details), extra)).encode()
		self.reply(e.status, body, [("Content-Type", "application/xml; charset=UTF-8")])

	def reply_xml(self, text, headers=None):
		self.reply(200, (XMLDECL + text).encode(),
		    [("Content-Type", "application/xml; charset=UTF-8")] + (headers or []))

	def log_request_line(self):
		log = self.server.log
		if log is None and self.server.ua_log is None:
			return
		g = self.headers.get("x-goog-if-generation-match")
		line = "%s %s%s %s%s%s\n" % (self.command, self.path,
		    " x-goog-if-generation-match=" + g.strip() if g is not None else "", self.status,
		    " x-goog-generation=" + self.reply_gen if self.reply_gen else "",
		    " t=%.6f" % (self.when or time.time()) if self.server.log_times else "")
		with self.server.log_lock:
			if log is not None:
				log.write(line)
				log.flush()
			if self.server.ua_log is not None:
				self.server.ua_log.write("%s %s %s\n" % (self.command, self.path,
				    self.headers.get("User-Agent", "-")))
				self.server.ua_log.flush()

	def serve(self):
		self.status = 0
		self.reply_gen = None
		self.when = None	# when this request changed an object
		body = self.read_body()
		try:
			raw_path, _, raw_query = self.path.partition("?")
			self.query = {}
			for part in raw_query.split("&"):
				if part:
					k, _, v = part.partition("=")
					self.query[urllib.parse.unquote(k)] = urllib.parse.unquote(v)
			self.authenticate(raw_path, raw_query, body)
			path = urllib.parse.unquote(raw_path)
			if not path.startswith("/") or path == "/":
				raise GcsError(501, "NotImplemented", "A header or query you provided "
				    "requested a function that is not implemented.",
				    "The emulator serves path-style /BUCKET/KEY requests only.")
			bucket, _, key = path[1:].partition("/")
			self.dispatch(bucket, key, body)
		except GcsError as e:
			self.reply_error(e)
		except (ConnectionError, BrokenPipeError):
			self.close_connection = True

	# ---- SigV4 ----

	def authenticate(self, raw_path, raw_query, body):
		auth = self.headers.get("Authorization")
		if auth is None:
			raise GcsError(403, "AccessDenied", "Access denied.",
			    "Anonymous caller does not have storage access to this bucket.")
		algo, _, rest = auth.strip().partition(" ")
		if algo != "AWS4-HMAC-SHA256":
			raise GcsError(400, "MalformedSecurityHeader", "Your request has a malformed "
			    "header.", "The emulator takes AWS4-HMAC-SHA256 only, not " + algo)
		fields = {}
		for f in rest.split(","):
			k, _, v = f.strip().partition("=")
			fields[k] = v
		try:
			access, date, region, service, term = fields["Credential"].split("/")
			signed = fields["SignedHeaders"].split(";")
			sig = fields["Signature"]
		except (KeyError, ValueError):
			raise GcsError(400, "MalformedSecurityHeader", "Your request has a malformed "
			    "header.", "Authorization: want Credential, SignedHeaders, Signature")
		secret = self.server.keys.get(access)
		if secret is None:
			raise GcsError(403, "InvalidAccessKeyId", "The GCS Access Key Id you provided "
			    "does not exist in our records.", "Unknown access id: " + access)
		if region != "auto" or service != "s3" or term != "aws4_request":
			raise GcsError(400, "AuthorizationHeaderMalformed", "The authorization header "
			    "is malformed.", "The credential scope must be DATE/auto/s3/aws4_request, "
			    "not %s/%s/%s/%s" % (date, region, service, term))
		amz_date = self.headers.get("x-amz-date") or self.headers.get("x-goog-date")
		try:
			t = datetime.datetime.strptime(amz_date or "", "%Y%m%dT%H%M%SZ").replace(
			    tzinfo=datetime.timezone.utc).timestamp()
		except ValueError:
			raise GcsError(400, "MalformedSecurityHeader", "Your request has a malformed "
			    "header.", "x-amz-date: want YYYYMMDDTHHMMSSZ, got %r" % amz_date)
		if date != amz_date[:8]:
			raise GcsError(400, "AuthorizationHeaderMalformed", "The authorization header "
			    "is malformed.", "The credential date %s is not x-amz-date's" % date)
		if abs(time.time() - t) > SKEW:
			raise GcsError(403, "RequestTimeTooSkewed", "The difference between the request "
			    "time and the server's time is too large.", "Request time: " + amz_date)
		for name in self.headers.keys():
			n = name.lower()
			if (n.startswith("x-amz-") or n.startswith("x-goog-")) and n not in signed:
				raise GcsError(403, "AccessDenied", "Access denied.",
				    "Header %s is present in the request but not signed." % n)
		if "host" not in signed:
			raise GcsError(400, "MalformedSecurityHeader", "Your request has a malformed "
			    "header.", "The host header must be signed.")
		payload = self.headers.get("x-amz-content-sha256") or \
		    self.headers.get("x-goog-content-sha256") or "UNSIGNED-PAYLOAD"
		if payload != "UNSIGNED-PAYLOAD" and payload != hashlib.sha256(body).hexdigest():
			raise GcsError(400, "XAmzContentSHA256Mismatch", "The provided "
			    "'x-amz-content-sha256' header does not match what was computed.",
			    "Given " + payload)

		canon_query = []
		for part in raw_query.split("&"):
			if part:
				k, _, v = part.partition("=")
				canon_query.append((urllib.parse.quote(urllib.parse.unquote_to_bytes(k), safe=""),
				    urllib.parse.quote(urllib.parse.unquote_to_bytes(v), safe="")))
		canon_query.sort()
		hdr_lines = []
		for n in signed:
			vals = self.headers.get_all(n) or []
			hdr_lines.append("%s:%s\n" % (n, ",".join(" ".join(v.split()) for v in vals)))
		creq = "\n".join([self.command,
		    urllib.parse.quote(urllib.parse.unquote_to_bytes(raw_path), safe="/"),
		    "&".join("%s=%s" % kv for kv in canon_query),
		    "".join(hdr_lines), ";".join(signed), payload])
		scope = "%s/%s/%s/%s" % (date, region, service, term)
		sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
		    hashlib.sha256(creq.encode()).hexdigest()])
		k = ("AWS4" + secret).encode()
		for m in (date, region, service, term):
			k = hmac.new(k, m.encode(), hashlib.sha256).digest()
		want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
		if not hmac.compare_digest(want, sig):
			raise GcsError(403, "SignatureDoesNotMatch", "Access denied.",
			    "The request signature we calculated does not match the signature you "
			    "provided. Check your Google secret key and signing method.",
			    [("StringToSign", sts), ("CanonicalRequest", creq)])

	# ---- requests ----

	def dispatch(self, bucket, key, body):
		st = self.server.store
		q = self.query
		m = self.command
		with st.lock:
			objs = st.buckets.get(bucket)
		if objs is None:
			raise GcsError(404, "NoSuchBucket", "The specified bucket does not exist.",
			    "No such bucket: " + bucket)
		if key == "":
			if m == "GET" and "uploads" in q:
				return self.list_uploads(bucket)
			if m == "GET":
				return self.list_objects(bucket, objs)
			if m == "POST" and "delete" in q:
				raise GcsError(501, "NotImplemented", "A header or query you provided "
				    "requested a function that is not implemented.",
				    "POST ?delete (multi-object delete) is not supported by the XML API; "
				    "delete objects one by one.")
			raise GcsError(501, "NotImplemented", "A header or query you provided requested "
			    "a function that is not implemented.", "%s on a bucket" % m)
		if m in ("PUT", "POST") and ("If-None-Match" in self.headers or
		    "If-Match" in self.headers):
			raise GcsError(501, "NotImplemented", "A header or query you provided requested "
			    "a function that is not implemented.", "Conditional writes take "
			    "x-goog-if-generation-match, not If-None-Match / If-Match.")
		if m == "PUT" and "uploadId" in q:
			return self.put_part(bucket, key, body)
		if m == "PUT":
			if "x-goog-copy-source" in self.headers or "x-amz-copy-source" in self.headers:
				raise GcsError(501, "NotImplemented", "A header or query you provided "
				    "requested a function that is not implemented.", "copy")
			return self.put_object(bucket, key, objs, body)
		if m in ("GET", "HEAD") and not q:
			return self.get_object(bucket, key, objs)
		if m == "DELETE" and "uploadId" in q:
			return self.abort_upload(bucket, key)
		if m == "DELETE" and not q:
			return self.delete_object(bucket, key, objs)
		if m == "POST" and "uploads" in q:
			return self.initiate(bucket, key)
		if m == "POST" and "uploadId" in q:
			return self.complete(bucket, key, objs, body)
		raise GcsError(501, "NotImplemented", "A header or query you provided requested a "
		    "function that is not implemented.", "%s %s" % (m, self.path))

	def check_md5(self, body):
		v = self.headers.get("Content-MD5")
		if v is None:
			return
		try:
			raw = base64.b64decode(v.strip(), validate=True)
		except (binascii.Error, ValueError):
			raw = b""
		if len(raw) != 16:
			raise GcsError(400, "InvalidDigest", "The Content-MD5 you specified is not "
			    "valid.", "Content-MD5: " + v)
		if raw != hashlib.md5(body).digest():
			raise GcsError(400, "BadDigest", "The Content-MD5 you specified did not match "
			    "what was received.", "Content-MD5: " + v)

	def object_headers(self, o):
		return [("ETag", '"%s"' % o.etag), ("x-goog-generation", str(o.generation)),
		    ("x-goog-metageneration", "1"), ("x-goog-hash", o.hash_header()),
		    ("x-goog-stored-content-length", str(len(o.data))),
		    ("x-goog-stored-content-encoding", "identity"),
		    ("x-goog-storage-class", "STANDARD")]

	def put_object(self, bucket, key, objs, body):
		self.check_md5(body)
		want = gen_match(self.headers)
		st = self.server.store
		ctype = self.headers.get("Content-Type", "application/octet-stream")
		with st.lock:
			check_precondition(want, objs.get(key))
			check_rate(st, bucket, key)
			o = Obj(body, st.next_generation(), ctype, md5=hashlib.md5(body).digest())
			objs[key] = o
			self.when = mutated(st, bucket, key)
		self.reply(200, b"", self.object_headers(o))

	def get_object(self, bucket, key, objs):
		want = gen_match(self.headers)
		with self.server.store.lock:
			o = objs.get(key)
			check_precondition(want, o) if o is not None else None
		if o is None:
			raise GcsError(404, "NoSuchKey", "The specified key does not exist.",
			    "No such object: %s/%s" % (bucket, key))
		hdrs = self.object_headers(o) + [("Content-Type", o.content_type),
		    ("Last-Modified", formatdate(o.mtime, usegmt=True)),
		    ("Cache-Control", "private, max-age=0")]
		size = len(o.data)
		rng = self.headers.get("Range")
		r = parse_range(rng, size) if rng is not None else None
		if r == "unsatisfiable":
			raise GcsError(416, "InvalidRange", "The requested range cannot be satisfied.",
			    rng)
		if r is None:
			return self.reply(200, o.data, hdrs)
		a, b = r
		self.reply(206, o.data[a:b + 1], hdrs + [("Content-Range", "bytes %d-%d/%d" %
		    (a, b, size))])

	def delete_object(self, bucket, key, objs):
		want = gen_match(self.headers)
		st = self.server.store
		with st.lock:
			o = objs.get(key)
			if o is not None:
				check_precondition(want, o)
				check_rate(st, bucket, key)
				del objs[key]
				self.when = mutated(st, bucket, key)
		if o is None:
			raise GcsError(404, "NoSuchKey", "The specified key does not exist.",
			    "No such object: %s/%s" % (bucket, key))
		self.reply(204)

	def list_objects(self, bucket, objs):
		q = self.query
		v2 = q.get("list-type") == "2"
		if "list-type" in q and not v2:
			raise GcsError(400, "InvalidArgument", "Invalid argument.",
			    "list-type must be 2")
		prefix = q.get("prefix", "")
		delim = q.get("delimiter", "")
		try:
			max_keys = int(q.get("max-keys", str(MAX_KEYS)))
			if max_keys < 0:
				raise ValueError
		except ValueError:
			raise GcsError(400, "InvalidArgument", "Invalid argument.",
			    "Invalid max-keys: " + q.get("max-keys", ""))
		max_keys = min(max_keys, MAX_KEYS)
		enc = q.get("encoding-type") == "url"
		show = (lambda s: urllib.parse.quote(s, safe="/")) if enc else (lambda s: s)
		after = ""
		if v2 and "continuation-token" in q:
			try:
				after = base64.urlsafe_b64decode(q["continuation-token"].encode()).decode()
			except (binascii.Error, ValueError, UnicodeDecodeError):
				raise GcsError(400, "InvalidArgument", "Invalid argument.",
				    "Invalid continuation token.")
		elif v2:
			after = q.get("start-after", "")
		else:
			after = q.get("marker", "")
		with self.server.store.lock:
			items = sorted((k, o) for k, o in objs.items()
			    if k.startswith(prefix) and k > after)
		contents, prefixes, last, truncated = [], [], None, False
		for k, o in items:
			if delim:
				i = k.find(delim, len(prefix))
				if i >= 0:
					cp = k[:i + len(delim)]
					if prefixes and prefixes[-1] == cp:
						last = k
						continue
					if len(contents) + len(prefixes) >= max_keys:
						truncated = True
						break
					prefixes.append(cp)
					last = k
					continue
			if len(contents) + len(prefixes) >= max_keys:
				truncated = True
				break
			contents.append((k, o))
			last = k
		out = ['<ListBucketResult xmlns="%s"><Name>%s</Name><Prefix>%s</Prefix>' %
		    (NS, xml_text(bucket), xml_text(show(prefix)))]
		if enc:
			out.append("<EncodingType>url</EncodingType>")
		if v2:
			out.append("<KeyCount>%d</KeyCount>" % (len(contents) + len(prefixes)))
			if "continuation-token" in q:
				out.append("<ContinuationToken>%s</ContinuationToken>" %
				    xml_text(q["continuation-token"]))
		else:
			out.append("<Marker>%s</Marker>" % xml_text(after))
		out.append("<MaxKeys>%d</MaxKeys>" % max_keys)
		if delim:
			out.append("<Delimiter>%s</Delimiter>" % xml_text(show(delim)))
		out.append("<IsTruncated>%s</IsTruncated>" % ("true" if truncated else "false"))
		if truncated and v2:
			out.append("<NextContinuationToken>%s</NextContinuationToken>" %
			    base64.urlsafe_b64encode(last.encode()).decode())
		elif truncated:
			out.append("<NextMarker>%s</NextMarker>" % xml_text(show(last)))
		for k, o in contents:
			out.append("<Contents><Key>%s</Key><Generation>%d</Generation>"
			    "<MetaGeneration>1</MetaGeneration><LastModified>%s</LastModified>"
			    "<ETag>\"%s\"</ETag><Size>%d</Size></Contents>" %
			    (xml_text(show(k)), o.generation, iso_time(o.mtime), o.etag, len(o.data)))
		for p in prefixes:
			out.append("<CommonPrefixes><Prefix>%s</Prefix></CommonPrefixes>" %
			    xml_text(show(p)))
		out.append("</ListBucketResult>")
		self.reply_xml("".join(out))

	# ---- multipart ----

	def upload_of(self, bucket, key):
		u = self.server.store.uploads.get(self.query.get("uploadId", ""))
		if u is None or u["bucket"] != bucket or u["key"] != key:
			raise GcsError(404, "NoSuchUpload", "The specified multipart upload does not "
			    "exist.", "No such upload: " + self.query.get("uploadId", ""))
		return u

	def initiate(self, bucket, key):
		st = self.server.store
		uid = "ABPnzm" + secrets.token_urlsafe(40)
		with st.lock:
			st.uploads[uid] = {"bucket": bucket, "key": key, "parts": {},
			    "ctype": self.headers.get("Content-Type", "application/octet-stream"),
			    "started": time.time()}
		self.reply_xml('<InitiateMultipartUploadResult xmlns="%s"><Bucket>%s</Bucket>'
		    "<Key>%s</Key><UploadId>%s</UploadId></InitiateMultipartUploadResult>" %
		    (NS, xml_text(bucket), xml_text(key), uid))

	def put_part(self, bucket, key, body):
		try:
			n = int(self.query.get("partNumber", ""))
		except ValueError:
			n = 0
		if not 1 <= n <= MAX_PARTS:
			raise GcsError(400, "InvalidArgument", "Invalid argument.",
			    "partNumber must be 1 to %d" % MAX_PARTS)
		self.check_md5(body)
		md5 = hashlib.md5(body).digest()
		with self.server.store.lock:
			self.upload_of(bucket, key)["parts"][n] = (body, md5)
		self.reply(200, b"", [("ETag", '"%s"' % md5.hex())])

	def abort_upload(self, bucket, key):
		st = self.server.store
		with st.lock:
			self.upload_of(bucket, key)
			del st.uploads[self.query["uploadId"]]
		self.reply(204)

	def complete(self, bucket, key, objs, body):
		try:
			root = ET.fromstring(body)
			want = []
			for p in root:
				if p.tag.rpartition("}")[2] != "Part":
					continue
				num = etag = None
				for c in p:
					tag = c.tag.rpartition("}")[2]
					if tag == "PartNumber":
						num = int(c.text)
					elif tag == "ETag":
						etag = (c.text or "").strip().strip('"')
				if num is None or etag is None:
					raise ValueError
				want.append((num, etag))
			if not want:
				raise ValueError
		except (ET.ParseError, ValueError, TypeError):
			raise GcsError(400, "MalformedXML", "The XML you provided was not well-formed "
			    "or did not validate against our published schema.", "")
		st = self.server.store
		with st.lock:
			u = self.upload_of(bucket, key)
			check_rate(st, bucket, key)
			nums = [n for n, _ in want]
			if nums != sorted(set(nums)):
				raise GcsError(400, "InvalidPartOrder", "The list of parts was not in "
				    "ascending order. The parts list must be specified in order by part "
				    "number.", "")
			for n, e in want:
				if n not in u["parts"] or u["parts"][n][1].hex() != e:
					raise GcsError(400, "InvalidPart", "One or more of the specified parts "
					    "could not be found. The part might not have been uploaded, or the "
					    "specified entity tag might not have matched the part's entity "
					    "tag.", "Part %d" % n)
			for n, _ in want[:-1]:
				if len(u["parts"][n][0]) < MIN_PART:
					raise GcsError(400, "EntityTooSmall", "Your proposed upload is "
					    "smaller than the minimum allowed object size.",
					    "Part %d has %d bytes; every part but the last needs at least %d" %
					    (n, len(u["parts"][n][0]), MIN_PART))
			data = b"".join(u["parts"][n][0] for n, _ in want)
			etag = "%s-%d" % (hashlib.md5(b"".join(u["parts"][n][1] for n, _ in want))
			    .hexdigest(), len(want))
			o = Obj(data, st.next_generation(), u["ctype"], md5=None, etag=etag)
			objs[key] = o
			self.when = mutated(st, bucket, key)
			del st.uploads[self.query["uploadId"]]
		self.reply_xml('<CompleteMultipartUploadResult xmlns="%s"><Location>http://%s/%s/%s'
		    "</Location><Bucket>%s</Bucket><Key>%s</Key><ETag>\"%s\"</ETag>"
		    "</CompleteMultipartUploadResult>" % (NS, xml_text(self.headers.get("Host", "")),
		    xml_text(bucket), xml_text(urllib.parse.quote(key)), xml_text(bucket),
		    xml_text(key), etag), [("x-goog-generation", str(o.generation)),
		    ("x-goog-metageneration", "1"), ("x-goog-hash", o.hash_header())])

	def list_uploads(self, bucket):
		with self.server.store.lock:
			ups = sorted((u["key"], uid, u["started"]) for uid, u in
			    self.server.store.uploads.items() if u["bucket"] == bucket)
		out = ['<ListMultipartUploadsResult xmlns="%s"><Bucket>%s</Bucket>'
		    "<IsTruncated>false</IsTruncated>" % (NS, xml_text(bucket))]
		for k, uid, t in ups:
			out.append("<Upload><Key>%s</Key><UploadId>%s</UploadId><Initiated>%s"
			    "</Initiated></Upload>" % (xml_text(k), uid, iso_time(t)))
		out.append("</ListMultipartUploadsResult>")
		self.reply_xml("".join(out))


def parse_range(h, size):
	"""(first, last) of a Range header, "unsatisfiable", or None to ignore it
	(a syntax HTTP does not define, or several ranges: the whole object)."""
	h = h.strip()
	if not h.startswith("bytes=") or "," in h:
		return None
	a, dash, b = h[6:].partition("-")
	a, b = a.strip(), b.strip()
	if dash != "-" or (a and not a.isdigit()) or (b and not b.isdigit()) or (not a and not b):
		return None
	if not a:	# the last b bytes
		n = int(b)
		if n == 0 or size == 0:
			return "unsatisfiable"
		return max(0, size - n), size - 1
	first = int(a)
	last = int(b) if b else size - 1
	if last < first:
		return None
	if first >= size:
		return "unsatisfiable"
	return first, min(last, size - 1)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
	daemon_threads = True
	request_queue_size = 128
	allow_reuse_address = True

	def handle_error(self, request, client_address):
		# The fault tests reset connections on purpose: not worth a traceback.
		if isinstance(sys.exc_info()[1], ConnectionError):
			return
		super().handle_error(request, client_address)


def serve(srv, port_file):
	"""Write srv's port to port_file (whole, by a rename) and serve until
	the parent process exits (tests/gceemu.py serves the same way)."""
	tmp = port_file + ".tmp"
	with open(tmp, "w") as f:
		f.write("%d\n" % srv.server_address[1])
	os.rename(tmp, port_file)

	parent = os.getppid()

	def watch():
		while os.getppid() == parent:
			time.sleep(0.5)
		os._exit(0)
	threading.Thread(target=watch, daemon=True).start()
	try:
		srv.serve_forever()
	except KeyboardInterrupt:
		pass


def check_log(path, rate):
	"""--check-log: the log against the limit of one write every rate s."""
	lines = []
	with open(path) as f:
		for line in f:
			head, sep, t = line.rstrip("\n").rpartition(" t=")
			if not sep:
				continue
			words = head.split(" ")
			i = next((i for i, w in enumerate(words) if i >= 2 and len(w) == 3 and
			    w.isdigit()), None)
			if i is None:
				continue
			lines.append((float(t), " ".join(words[:i]), int(words[i])))
	lines.sort(key=lambda x: x[0])
	writes, refused, unanswered, close, notes = 0, 0, 0, 0, []
	last = {}		# object -> time of its last change
	answered_after = {}	# request -> time of its last answer that was no 429
	for t, req, status in lines:
		if status != 429:
			answered_after[req] = t
	for t, req, status in lines:
		method, path = req.split(" ")[0], req.split(" ")[1]
		obj = path.partition("?")[0]
		if status == 429:
			refused += 1
			if answered_after.get(req, -1) < t:
				unanswered += 1
				notes.append("never answered but 429: " + req)
			continue
		change = (method in ("PUT", "DELETE") and "uploadId=" not in path) or \
		    (method == "POST" and "uploadId=" in path)
		if not change or not 200 <= status < 300:
			continue
		writes += 1
		# the emulator's window is on its monotonic clock, these times on
		# the wall clock, read together: a millisecond apart at most
		if obj in last and t - last[obj] < rate - 0.001:
			close += 1
			notes.append("%s changed twice in %.3f s" % (obj, t - last[obj]))
		last[obj] = t
	print("writes=%d refused=%d unanswered=%d close=%d" % (writes, refused, unanswered, close))
	for n in notes[:5]:
		print(n)


def main():
	ap = argparse.ArgumentParser(description="An emulator of GCS's XML API for tests.")
	ap.add_argument("--check-log", metavar="FILE")
	ap.add_argument("--port-file")
	ap.add_argument("--keys", help='file of "ACCESS_ID SECRET" lines')
	ap.add_argument("--bucket", action="append", default=[])
	ap.add_argument("--log")
	ap.add_argument("--ua-log")
	ap.add_argument("--log-times", action="store_true")
	ap.add_argument("--object-rate", type=float, default=0.0, metavar="SECONDS")
	a = ap.parse_args()
	if a.check_log:
		return check_log(a.check_log, a.object_rate)
	if not a.port_file or not a.keys:
		ap.error("--port-file and --keys are required to serve")

	keys = {}
	with open(a.keys) as f:
		for n, line in enumerate(f, 1):
			if line.strip() and not line.lstrip().startswith("#"):
				parts = line.split()
				if len(parts) != 2:
					sys.exit("gcsemu: %s:%d: want ACCESS_ID SECRET" % (a.keys, n))
				keys[parts[0]] = parts[1]
	srv = Server(("127.0.0.1", 0), Handler)
	srv.keys = keys
	srv.store = Store(a.bucket, a.object_rate)
	srv.log = open(a.log, "a") if a.log else None
	srv.log_times = a.log_times
	srv.log_lock = threading.Lock()
	srv.ua_log = open(a.ua_log, "a") if a.ua_log else None
	serve(srv, a.port_file)


if __name__ == "__main__":
	main()
