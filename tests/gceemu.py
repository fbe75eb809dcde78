#!/usr/bin/python3
# gceemu.py: an emulator of the parts of Google Compute Engine's REST API
# (v1, JSON) that spotrun's GCP engine drives (cloud/gcp/), with Google's
# OAuth 2 token endpoint and the metadata server's token, for its tests
# (there is no Compute to reach from a test machine, and no emulator of
# Google's). Python 3 standard library only; in-memory; HTTP on 127.0.0.1
# at a port the kernel chooses, written to --port-file once it listens.
#
# What it emulates, from the REST reference
# (https://cloud.google.com/compute/docs/reference/rest/v1/: instanceTemplates
# insert/get/list/delete; regionInstanceGroupManagers insert/get/resize/
# delete/listManagedInstances; instanceGroupManagers aggregatedList;
# instances aggregatedList/delete; globalOperations, regionOperations,
# zoneOperations get and wait) and Google's OAuth 2 for servers
# (https://developers.google.com/identity/protocols/oauth2/service-account,
# the refresh-token grant of .../oauth2/web-server):
#
#  - paths /compute/v1/projects/PROJECT/...; a project not given by
#    --project -> 404 notFound;
#  - "Authorization: Bearer TOKEN" with a token this emulator issued and
#    not expired, else 401 with Google's document (reason authError,
#    status UNAUTHENTICATED);
#  - resources as Compute writes them: kind, id (digits, as a string),
#    creationTimestamp, selfLink (https://www.googleapis.com/compute/v1/...,
#    as Google writes it whatever the host asked), name;
#  - every mutation answers an operation (kind compute#operation, name
#    operation-..., operationType, targetLink, targetId, status, progress,
#    insertTime, selfLink, and region or zone for a regional or zonal one);
#    with --op-polls N it is PENDING, then RUNNING, and DONE at the Nth
#    get or wait (the change itself is made at once); a failed one has
#    error.errors[] (code, message) with httpErrorStatusCode and
#    httpErrorMessage;
#  - errors as Google's JSON documents: {"error": {"code", "message",
#    "errors": [{"message", "domain": "global", "reason"}]}}: 404 notFound
#    ("The resource 'projects/P/...' was not found"), 409 alreadyExists,
#    400 invalid and resourceInUseByAnotherResource (a template a group
#    uses);
#  - a regional managed instance group keeps targetSize instances over its
#    distributionPolicy zones: each made from its template (labels,
#    metadata, machine type, scheduling), named BASE-xxxx; a zone with an
#    injected capacity error (below) gets none: a group of shape EVEN
#    leaves the instance CREATING with lastAttempt.errors, one of another
#    shape tries its other zones first; a deleted member (a preemption) is
#    replaced; a group deleted takes its instances; listManagedInstances
#    answers each (instance URL, id, instanceStatus, currentAction,
#    version, lastAttempt); currentActions and status.isStable follow;
#  - lists page by --page-size (default 500, Compute's), nextPageToken;
#    aggregated lists keyed "regions/R" or "zones/Z" with a warning
#    NO_RESULTS_ON_PAGE for a scope without any; filter: only
#    `labels.KEY = "VALUE"` (quotes optional) or `name = VALUE`, else
#    400 invalid;
#  - images.getFromFamily: GET projects/IMAGE-PROJECT/global/images/family/F
#    of a family given by --image (any project), answered with the image
#    (kind compute#image, name, family, status READY, selfLink), else 404;
#  - POST /token: grant_type refresh_token (client_id, client_secret,
#    refresh_token of --users) or urn:ietf:params:oauth:grant-type:
#    jwt-bearer (an RS256 JWT: header alg RS256, typ JWT, kid of --sa; iss
#    of --sa; aud this endpoint's URL; scope; exp - iat <= 3600; iat within
#    5 minutes of now; the RSASSA-PKCS1-v1_5 SHA-256 signature checked
#    against the key's modulus and exponent 65537), answered as Google
#    does ({"access_token", "expires_in", "token_type": "Bearer"}, or 400
#    {"error": "invalid_grant", "error_description": ...}, 401
#    invalid_client);
#  - GET /computeMetadata/v1/instance/service-accounts/default/token and
#    /computeMetadata/v1/project/project-id with "Metadata-Flavor: Google"
#    (else 403), answered with that header, as the metadata server does.
#
# Test hooks (no auth; not Google's): POST /emu/capacity?zone=Z&code=C
# makes zone Z refuse new instances with C (ZONE_RESOURCE_POOL_EXHAUSTED,
# ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS or QUOTA_EXCEEDED, with
# Google's message for it; no code: capacity again); POST
# /emu/advice?location=zones/Z&type=T&rates=R1,R2,... sets what
# advice.capacityHistory answers for Spot VMs of machine type T in zone Z
# (or regions/R): one record a day, the last ending now, oldest first
# (none set: an empty preemptionHistory); /emu/advice?deny=1 makes it
# answer 403 forbidden, as for an account without it (deny=0: answer
# again); POST
# /emu/fail-op?type=T&code=C makes the next operation of operationType T
# fail with C; POST /emu/preempt?zone=Z&name=N deletes an instance as a
# preemption does (its group, if any, makes it again at once); POST
# /emu/revoke forgets every token issued (the next Compute request is
# answered 401); POST /emu/http-error?status=S&reason=R
# &count=N answers the next N Compute requests with status S and Google's
# document of reason R; GET /emu/state: every template, group and instance;
# GET /emu/dump: the same as Compute writes them (templates whole, groups
# as get answers them, instances whole).
#
# Instances as processes (not Google's): with --on-instance CMD each
# instance made runs `CMD NAME FILE` (through sh; NAME the instance's,
# FILE its metadata's user-data, written under --vm-dir, else $TMPDIR) in
# a session of its own, so that a test boots it as a VM
# (tests/jobs/vm.sh); an instance deleted, whichever way (preempted,
# deleted, its group resized down or deleted), is shut down: SIGTERM to
# that process (systemd stopping the VM's services), its process group
# killed if still there after --grace seconds (30: a Spot VM's notice).
# The log says "instance ZONE/NAME: booted, pid P", "...: shutdown",
# "...: powered off after S s" and "...: exited CODE" (or "on signal N").
#
# What it does not: instances.insert, bulkInsert, zonal groups, versions,
# autoscalers, updates of a template, stateful policies, ETags, quotas
# counted, and TLS.
#
# Usage: gceemu.py --port-file FILE --project P [--users FILE] [--sa FILE]
#                  [--token-ttl S] [--op-polls N] [--page-size N] [--log FILE]
#                  [--image PROJECT/FAMILY=NAME]...
#                  [--on-instance CMD [--grace S] [--vm-dir DIR]]
#   --image: family FAMILY of project PROJECT points at image NAME;
#   --users FILE: "CLIENT_ID CLIENT_SECRET REFRESH_TOKEN" a line;
#   --sa FILE: "EMAIL KEY_ID MODULUS_HEX" a line (openssl rsa -modulus);
#   --log FILE: "METHOD PATH STATUS" a request, and for each token granted
#   "token grant=G ..." with what was checked (kid, iss, aud, scope, life).
# The emulator exits when its parent process does (gcsemu.py's serve).

import argparse
import base64
import hashlib
import http.server
import json
import os
import random
import re
import threading
import time
import urllib.parse

# the server and its start, as the GCS emulator's (this folder is on the path)
from gcsemu import Server, serve
from vmproc import VMs

GOOG = "https://www.googleapis.com/compute/v1/"
SKEW = 300
NAME_RE = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
CAPACITY_MESSAGES = {
	"ZONE_RESOURCE_POOL_EXHAUSTED": "The zone 'projects/{p}/zones/{z}' does not have enough "
	    "resources available to fulfill the request.  Try a different zone, or try again "
	    "later.",
	"ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS": "The zone 'projects/{p}/zones/{z}' does not "
	    "have enough resources available to fulfill the request. '(resource type:compute)'.",
	"QUOTA_EXCEEDED": "Quota 'PREEMPTIBLE_NVIDIA_L4_GPUS' exceeded.  Limit: 0.0 in region "
	    "{r}.",
}
# a zone's region: "us-central1-a" -> "us-central1"
def region_of(zone):
	return zone.rsplit("-", 1)[0]


class GError(Exception):
	def __init__(self, status, reason, message):
		super().__init__(message)
		self.status, self.reason, self.message = status, reason, message

	def doc(self):
		status = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
			  404: "NOT_FOUND", 409: "ALREADY_EXISTS", 429: "RESOURCE_EXHAUSTED",
			  503: "UNAVAILABLE"}.get(self.status)
		e = {"code": self.status, "message": self.message,
		     "errors": [{"message": self.message, "domain": "global", "reason": self.reason}]}
		if status:
			e["status"] = status
		return {"error": e}


def not_found(what):
	return GError(404, "notFound", "The resource '%s' was not found" % what)


def invalid(field, value, why):
	return GError(400, "invalid", "Invalid value for field '%s': '%s'. %s" % (field, value, why))


def now_rfc3339():
	t = time.time()
	return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03d-00:00" % (
	    int(t * 1000) % 1000)


class State:
	def __init__(self, a):
		self.lock = threading.RLock()
		self.project = a.project
		self.templates = {}		# name -> resource
		self.groups = {}		# (region, name) -> resource (+ "_slots")
		self.instances = {}		# (zone, name) -> resource
		self.ops = {}			# name -> [resource, polls left, effect-error]
		self.capacity = {}		# zone -> code
		self.advice = {}		# (location, machine type) -> daily preemption rates
		self.advice_denied = False
		self.fail_next = {}		# operationType -> code
		self.http_errors = []		# (status, reason) for the next requests
		self.tokens = {}		# token -> expiry
		self.users = {}
		self.sas = {}
		self.token_ttl = a.token_ttl
		self.op_polls = a.op_polls
		self.page_size = a.page_size
		self.families = {}		# (project, family) -> image name
		for spec in a.image or []:
			fam, name = spec.split("=", 1)
			self.families[tuple(fam.split("/", 1))] = name
		self.next_id = random.randint(10**17, 9 * 10**17)
		self.log = lambda line: None
		self.vmp = VMs(a.on_instance, a.grace, a.vm_dir, lambda line: self.log(line))
		if a.users:
			for line in open(a.users):
				if line.strip():
					cid, sec, rt = line.split()
					self.users[cid] = (sec, rt)
		if a.sa:
			for line in open(a.sa):
				if line.strip():
					email, kid, mod = line.split()
					self.sas[email] = (kid, int(mod.split("=")[-1], 16))

	def id(self):
		self.next_id += random.randint(1, 9999)
		return str(self.next_id)

	def base(self):
		return GOOG + "projects/%s/" % self.project

	# ---- operations ----

	def op(self, optype, target_link, target_id, scope_kind=None, scope=None, undo=None):
		"""An operation of the change just made; undo reverts it when
		a failure was injected for optype."""
		name = "operation-%d-%s-%s-%s" % (int(time.time() * 1000), os.urandom(6).hex()[:13],
		    os.urandom(4).hex(), os.urandom(4).hex())
		if scope_kind == "region":
			self_link = self.base() + "regions/%s/operations/%s" % (scope, name)
		elif scope_kind == "zone":
			self_link = self.base() + "zones/%s/operations/%s" % (scope, name)
		else:
			self_link = self.base() + "global/operations/%s" % name
		o = {"kind": "compute#operation", "id": self.id(), "name": name,
		     "operationType": optype, "targetLink": target_link, "targetId": target_id,
		     "status": "PENDING" if self.op_polls > 0 else "DONE", "user": "spotrun-test@emu",
		     "progress": 0 if self.op_polls > 0 else 100, "insertTime": now_rfc3339(),
		     "selfLink": self_link}
		if scope_kind:
			o[scope_kind] = self.base() + "%ss/%s" % (scope_kind, scope)
		code = self.fail_next.pop(optype, None)
		if code is not None and undo is not None:
			undo()
		if code is not None:
			o["_error"] = {"errors": [{"code": code, "message": CAPACITY_MESSAGES.get(code,
			    "Injected failure %s." % code).format(p=self.project, z=scope or "-",
			    r=region_of(scope) if scope_kind == "zone" else scope or "-")}]}
		self.ops[name] = [o, self.op_polls, scope_kind, scope]
		if o["status"] == "DONE":
			self.finish(o)
		return dict((k, v) for k, v in o.items() if not k.startswith("_"))

	def finish(self, o):
		o["status"] = "DONE"
		o["progress"] = 100
		o.setdefault("startTime", now_rfc3339())
		o["endTime"] = now_rfc3339()
		if "_error" in o:
			o["error"] = o.pop("_error")
			o["httpErrorStatusCode"] = 503 if o["error"]["errors"][0]["code"].startswith(
			    "ZONE_RESOURCE") else 403
			o["httpErrorMessage"] = "SERVICE UNAVAILABLE" if o["httpErrorStatusCode"] == 503 \
			    else "FORBIDDEN"

	def poll_op(self, kind, scope, name):
		ent = self.ops.get(name)
		if ent is None or ent[2] != kind or ent[3] != scope:
			where = {"region": "regions/%s/" % scope, "zone": "zones/%s/" % scope}.get(kind,
			    "global/")
			raise not_found("projects/%s/%soperations/%s" % (self.project, where, name))
		o = ent[0]
		if o["status"] != "DONE":
			ent[1] -= 1
			if ent[1] <= 0:
				self.finish(o)
			else:
				o["status"] = "RUNNING"
				o["startTime"] = now_rfc3339()
				o["progress"] = 50
		return dict((k, v) for k, v in o.items() if not k.startswith("_"))

	# ---- groups ----

	def reconcile(self, g):
		region = g["_region"]
		zones = [z["zone"].rsplit("/", 1)[1] for z in g["distributionPolicy"]["zones"]]
		shape = g["distributionPolicy"].get("targetShape", "EVEN")
		slots = g["_slots"]
		# preempted or deleted members are recreated under their names
		for s in slots:
			if s["created"] and (s["zone"], s["name"]) not in self.instances:
				s["created"] = False
		while len(slots) < g["targetSize"]:
			name = "%s-%s" % (g["baseInstanceName"], "".join(random.choice(
			    "abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(4)))
			counts = {z: 0 for z in zones}
			for s in slots:
				counts[s["zone"]] = counts.get(s["zone"], 0) + 1
			zone = min(zones, key=lambda z: (counts[z], zones.index(z)))
			slots.append({"name": name, "zone": zone, "created": False, "error": None})
		while len(slots) > g["targetSize"]:
			s = slots.pop()
			self.drop((s["zone"], s["name"]))
		tmpl = self.templates.get(g["instanceTemplate"].rsplit("/", 1)[1])
		for s in slots:
			if s["created"]:
				continue
			order = [s["zone"]] + ([z for z in zones if z != s["zone"]] if shape != "EVEN"
			    else [])
			ok = next((z for z in order if z not in self.capacity), None)
			if ok is None or tmpl is None:
				code = self.capacity.get(s["zone"], "RESOURCE_NOT_FOUND")
				s["error"] = {"code": code, "message": CAPACITY_MESSAGES.get(code,
				    "The template was not found.").format(p=self.project, z=s["zone"],
				    r=region)}
				continue
			s["zone"], s["created"], s["error"] = ok, True, None
			self.make_instance(ok, s["name"], tmpl, g)

	def make_instance(self, zone, name, tmpl, g):
		p = tmpl["properties"]
		self.instances[(zone, name)] = {
		    "kind": "compute#instance", "id": self.id(), "creationTimestamp": now_rfc3339(),
		    "name": name, "machineType": self.base() + "zones/%s/machineTypes/%s" % (zone,
		    p["machineType"]), "status": "RUNNING", "zone": self.base() + "zones/" + zone,
		    "labels": dict(p.get("labels", {})), "scheduling": dict(p.get("scheduling", {})),
		    "metadata": {"kind": "compute#metadata", "items": list(p.get("metadata", {}).get(
		    "items", [])) + [{"key": "created-by", "value": "projects/%s/regions/%s/"
		    "instanceGroupManagers/%s" % (self.project, g["_region"], g["name"])}]},
		    "guestAccelerators": list(p.get("guestAccelerators", [])),
		    "selfLink": self.base() + "zones/%s/instances/%s" % (zone, name)}
		self.boot((zone, name))

	# ---- instances as processes (--on-instance) ----

	def boot(self, key):
		"""Run --on-instance for the instance just made (tests/vmproc.py),
		its host name the instance's name, its user-data the metadata's."""
		inst = self.instances[key]
		ud = [i["value"] for i in inst["metadata"]["items"] if i["key"] == "user-data"]
		self.vmp.boot("%s/%s" % key, key[1], (ud[0] if ud else "").encode())

	def drop(self, key):
		"""Delete instance key (None: none): its process, if any, is shut
		down as a VM is (tests/vmproc.py)."""
		inst = self.instances.pop(key, None)
		self.vmp.shutdown("%s/%s" % key)
		return inst

	def reconcile_all(self):
		for g in self.groups.values():
			self.reconcile(g)

	def group_view(self, g):
		out = dict((k, v) for k, v in g.items() if not k.startswith("_"))
		acts = dict.fromkeys(["abandoning", "creating", "creatingWithoutRetries", "deleting",
		    "none", "recreating", "refreshing", "restarting", "resuming", "starting",
		    "stopping", "suspending", "verifying"], 0)
		for s in g["_slots"]:
			acts["none" if s["created"] else "creating"] += 1
		out["currentActions"] = acts
		out["status"] = {"isStable": acts["creating"] == 0, "versionTarget": {"isReached": True},
		    "stateful": {"hasStatefulConfig": False, "perInstanceConfigs": {"allEffective": True}}}
		return out


def b64url_decode(s):
	return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")


def rs256_ok(signing_input, sig, n, e=65537):
	k = (n.bit_length() + 7) // 8
	if len(sig) != k:
		return False
	m = pow(int.from_bytes(sig, "big"), e, n).to_bytes(k, "big")
	digest = SHA256_PREFIX + hashlib.sha256(signing_input).digest()
	return m == b"\x00\x01" + b"\xff" * (k - 3 - len(digest)) + b"\x00" + digest


class Handler(http.server.BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"

	def log_message(self, fmt, *args):
		pass

	def do_GET(self):
		self.serve("GET")

	def do_POST(self):
		self.serve("POST")

	def do_DELETE(self):
		self.serve("DELETE")

	def log(self, line):
		if self.server.log:
			with self.server.log_lock:
				self.server.log.write(line + "\n")
				self.server.log.flush()

	def reply(self, status, obj, headers=None, raw=None):
		body = raw if raw is not None else (json.dumps(obj, indent=1) + "\n").encode()
		# logged before the reply, so a client that reads the log after
		# its answer finds the line
		self.log("%s %s %d" % (self.command, self.path, status) +
		    (" t=%.6f" % time.time() if self.server.log_times else ""))
		self.send_response(status)
		self.send_header("Content-Type", "application/json; charset=UTF-8" if raw is None
		    else "text/plain")
		self.send_header("Content-Length", str(len(body)))
		for k, v in (headers or {}).items():
			self.send_header(k, v)
		self.end_headers()
		self.wfile.write(body)

	def serve(self, method):
		n = int(self.headers.get("Content-Length") or 0)
		body = self.rfile.read(n) if n else b""
		u = urllib.parse.urlsplit(self.path)
		q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
		st = self.server.state
		try:
			with st.lock:
				if u.path == "/token" and method == "POST":
					return self.token(body)
				if u.path.startswith("/computeMetadata/v1/"):
					return self.metadata(u.path)
				if u.path.startswith("/emu/"):
					return self.hook(method, u.path, q)
				if not u.path.startswith("/compute/v1/projects/"):
					raise GError(404, "notFound", "Not Found")
				self.authorize()
				if st.http_errors:
					status, reason = st.http_errors.pop(0)
					raise GError(status, reason, "Injected %s." % reason)
				rest = u.path[len("/compute/v1/projects/"):].split("/")
				if len(rest) == 5 and rest[1:4] == ["global", "images", "family"] and \
				    method == "GET":
					return self.reply(200, self.family(rest[0], rest[4]))
				if rest[0] != st.project:
					raise not_found("projects/" + rest[0])
				st.reconcile_all()
				obj = self.compute(method, rest[1:], q, body)
				st.reconcile_all()
				return self.reply(200, obj)
		except GError as e:
			return self.reply(e.status, e.doc())

	def authorize(self):
		h = self.headers.get("Authorization", "")
		tok = h[7:] if h.startswith("Bearer ") else None
		exp = self.server.state.tokens.get(tok)
		if exp is None or exp < time.time():
			raise GError(401, "authError", "Request had invalid authentication credentials. "
			    "Expected OAuth 2 access token, login cookie or other valid authentication "
			    "credential. See https://developers.google.com/identity/sign-in/web/"
			    "devconsole-project.")
		quota = self.headers.get("x-goog-user-project")
		if quota:
			self.log("x-goog-user-project: " + quota)

	# ---- OAuth ----

	def grant(self, how):
		st = self.server.state
		tok = "ya29.emu-" + os.urandom(24).hex()
		st.tokens[tok] = time.time() + st.token_ttl
		self.log("token " + how)
		return self.reply(200, {"access_token": tok, "expires_in": st.token_ttl,
		    "token_type": "Bearer"})

	def token(self, body):
		st = self.server.state
		f = dict(urllib.parse.parse_qsl(body.decode()))
		g = f.get("grant_type")

		def bad(status, code, desc):
			self.log("token refused: " + desc)
			return self.reply(status, {"error": code, "error_description": desc})
		if g == "refresh_token":
			u = st.users.get(f.get("client_id"))
			if u is None or u[0] != f.get("client_secret"):
				return bad(401, "invalid_client", "The OAuth client was not found.")
			if u[1] != f.get("refresh_token"):
				return bad(400, "invalid_grant", "Bad Request")
			return self.grant("grant=refresh_token client_id=%s" % f["client_id"])
		if g == "urn:ietf:params:oauth:grant-type:jwt-bearer":
			parts = f.get("assertion", "").split(".")
			try:
				h = json.loads(b64url_decode(parts[0]))
				c = json.loads(b64url_decode(parts[1]))
				sig = b64url_decode(parts[2])
			except Exception:
				return bad(400, "invalid_grant", "Invalid JWT: not three base64url parts")
			sa = st.sas.get(c.get("iss"))
			if sa is None:
				return bad(400, "invalid_grant", "Invalid grant: account not found")
			if h.get("alg") != "RS256" or h.get("typ") != "JWT" or h.get("kid") != sa[0]:
				return bad(400, "invalid_grant", "Invalid JWT header")
			aud = "http://%s/token" % self.headers.get("Host")
			life = c.get("exp", 0) - c.get("iat", 0)
			if c.get("aud") != aud or not c.get("scope"):
				return bad(400, "invalid_grant", "Invalid JWT: aud or scope")
			if not 0 < life <= 3600 or abs(c.get("iat", 0) - time.time()) > SKEW:
				return bad(400, "invalid_grant", "Invalid JWT: Token must be a short-lived "
				    "token (60 minutes) and in a reasonable timeframe. Check your iat and "
				    "exp values in the JWT claim.")
			if not rs256_ok((parts[0] + "." + parts[1]).encode(), sig, sa[1]):
				return bad(400, "invalid_grant", "Invalid JWT Signature.")
			return self.grant("grant=jwt-bearer kid=%s iss=%s aud=%s scope=%s life=%d" % (
			    h["kid"], c["iss"], c["aud"], c["scope"], life))
		return bad(400, "unsupported_grant_type", "Invalid grant_type: %s" % g)

	def metadata(self, path):
		st = self.server.state
		if self.headers.get("Metadata-Flavor") != "Google":
			return self.reply(403, None, raw=b"Missing Metadata-Flavor:Google header.\n")
		h = {"Metadata-Flavor": "Google"}
		if path == "/computeMetadata/v1/instance/service-accounts/default/token":
			tok = "ya29.emu-md-" + os.urandom(24).hex()
			st.tokens[tok] = time.time() + st.token_ttl
			self.log("token grant=metadata")
			return self.reply(200, {"access_token": tok, "expires_in": st.token_ttl,
			    "token_type": "Bearer"}, h)
		if path == "/computeMetadata/v1/project/project-id":
			return self.reply(200, None, h, raw=st.project.encode())
		return self.reply(404, None, h, raw=b"Not Found\n")

	def hook(self, method, path, q):
		st = self.server.state
		if path == "/emu/capacity":
			if q.get("code"):
				st.capacity[q["zone"]] = q["code"]
			else:
				st.capacity.pop(q["zone"], None)
			st.reconcile_all()
			return self.reply(200, {})
		if path == "/emu/advice":
			if q.get("deny"):
				st.advice_denied = q["deny"] == "1"
			else:
				st.advice[(q["location"], q["type"])] = [float(r) for r in
				    q["rates"].split(",") if r]
			return self.reply(200, {})
		if path == "/emu/fail-op":
			st.fail_next[q["type"]] = q["code"]
			return self.reply(200, {})
		if path == "/emu/preempt":
			if st.drop((q["zone"], q["name"])) is None:
				raise not_found("instance")
			st.reconcile_all()	# its group replaces it, as Compute does at once
			return self.reply(200, {})
		if path == "/emu/revoke":
			st.tokens.clear()
			return self.reply(200, {})
		if path == "/emu/http-error":
			st.http_errors += [(int(q["status"]), q["reason"])] * int(q.get("count", "1"))
			return self.reply(200, {})
		if path == "/emu/dump":
			return self.reply(200, {"templates": [t for _, t in sorted(st.templates.items())],
			    "groups": [st.group_view(g) for _, g in sorted(st.groups.items())],
			    "instances": [i for _, i in sorted(st.instances.items())]})
		if path == "/emu/state":
			return self.reply(200, {"templates": sorted(st.templates), "groups": sorted(
			    "%s/%s" % k for k in st.groups), "instances": sorted("%s/%s" % k for k in
			    st.instances)})
		raise GError(404, "notFound", "no such hook")

	# ---- Compute ----

	def family(self, project, family):
		st = self.server.state
		name = st.families.get((project, family))
		if name is None:
			raise not_found("projects/%s/global/images/family/%s" % (project, family))
		return {"kind": "compute#image", "id": str(int(hashlib.sha256(name.encode()).hexdigest()[:15], 16)),
		    "creationTimestamp": now_rfc3339(), "name": name, "family": family,
		    "status": "READY", "sourceType": "RAW", "architecture": "X86_64",
		    "selfLink": GOOG + "projects/%s/global/images/%s" % (project, name)}

	def compute(self, method, p, q, body):
		st = self.server.state
		req = json.loads(body) if body else {}
		if p[0] == "global" and p[1] == "instanceTemplates":
			return self.templates(method, p[2:], q, req)
		if p[0] == "global" and p[1] == "operations" and len(p) >= 3:
			return st.poll_op(None, None, p[2])
		if p[0] == "regions" and len(p) >= 3 and p[2] == "operations" and len(p) >= 4:
			return st.poll_op("region", p[1], p[3])
		if p[0] == "zones" and len(p) >= 3 and p[2] == "operations" and len(p) >= 4:
			return st.poll_op("zone", p[1], p[3])
		if p[0] == "regions" and len(p) >= 3 and p[2] == "instanceGroupManagers":
			return self.groups(method, p[1], p[3:], q, req)
		if p[0] == "regions" and p[2:] == ["advice", "capacityHistory"] and method == "POST":
			return self.capacity_history(p[1], req)
		if p[0] == "aggregated" and len(p) == 2 and method == "GET":
			return self.aggregated(p[1], q)
		if p[0] == "zones" and len(p) == 4 and p[2] == "instances" and method == "DELETE":
			inst = st.drop((p[1], p[3]))
			if inst is None:
				raise not_found("projects/%s/zones/%s/instances/%s" % (st.project, p[1], p[3]))
			# a member deleted by hand is recreated by its group, as Compute does
			return st.op("delete", inst["selfLink"], inst["id"], "zone", p[1])
		raise GError(404, "notFound", "Not Found")

	def capacity_history(self, region, req):
		"""advice.capacityHistory: the rates /emu/advice set for the
		location and machine type, one record a day ending now (none when
		none was set); 403 after /emu/advice?deny=1, as for an account
		without the advice."""
		st = self.server.state
		if st.advice_denied:
			raise GError(403, "forbidden", "Required 'compute.advice.capacityHistory' "
			    "permission for 'projects/%s'" % st.project)
		ip = req.get("instanceProperties", {})
		mt = ip.get("machineType")
		if not isinstance(mt, str) or not mt:
			raise invalid("instanceProperties.machineType", mt or "", "Must be specified.")
		if ip.get("scheduling", {}).get("provisioningModel") != "SPOT":
			raise invalid("instanceProperties.scheduling.provisioningModel",
			    ip.get("scheduling", {}).get("provisioningModel", ""), "Must be SPOT.")
		loc = req.get("locationPolicy", {}).get("location", "")
		m = re.fullmatch(r"(zones|regions)/([a-z0-9-]+)", loc)
		if not m or (m.group(1) == "regions" and m.group(2) != region) or \
		    (m.group(1) == "zones" and not m.group(2).startswith(region + "-")):
			raise invalid("locationPolicy.location", loc, "Must be the region or one of its "
			    "zones.")
		types = req.get("types")
		if not isinstance(types, list) or not types or \
		    any(t not in ("PREEMPTION", "PRICE") for t in types):
			raise invalid("types", str(types), "Must list PREEMPTION or PRICE.")
		rates = st.advice.get((loc, mt), [])
		now = time.time()
		day = 86400
		hist = [{"interval": {"startTime": time.strftime("%Y-%m-%dT%H:%M:%SZ",
		    time.gmtime(now - (len(rates) - i) * day)), "endTime": time.strftime(
		    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - (len(rates) - i - 1) * day))},
		    "preemptionRate": r} for i, r in enumerate(rates)]
		self.log("advice %s %s" % (loc, mt))
		out = {"location": st.base() + loc, "machineType": mt}
		if "PREEMPTION" in types:
			out["preemptionHistory"] = hist
		return out

	def page(self, items, q):
		st = self.server.state
		size = min(int(q.get("maxResults", st.page_size)), st.page_size)
		start = int(q["pageToken"]) if q.get("pageToken", "").isdigit() else 0
		if q.get("pageToken") and not q["pageToken"].isdigit():
			raise invalid("pageToken", q["pageToken"], "Invalid page token.")
		chunk = items[start:start + size]
		token = str(start + size) if start + size < len(items) else None
		return chunk, token

	def matches(self, res, q):
		f = q.get("filter")
		if not f:
			return True
		m = re.fullmatch(r'\s*labels\.([a-z][-_a-z0-9]*)\s*=\s*"?([^"]*)"?\s*', f)
		if m:
			return res.get("labels", res.get("properties", {}).get("labels", {})).get(
			    m.group(1)) == m.group(2)
		m = re.fullmatch(r'\s*name\s*=\s*"?([^"]*)"?\s*', f)
		if m:
			return res.get("name") == m.group(1)
		raise invalid("filter", f, "Invalid list filter expression.")

	def templates(self, method, p, q, req):
		st = self.server.state
		if not p and method == "GET":
			items = [t for _, t in sorted(st.templates.items()) if self.matches(t, q)]
			chunk, token = self.page(items, q)
			out = {"kind": "compute#instanceTemplateList", "id": "projects/%s/global/"
			    "instanceTemplates" % st.project, "items": chunk,
			    "selfLink": st.base() + "global/instanceTemplates"}
			if token:
				out["nextPageToken"] = token
			return out
		if not p and method == "POST":
			name = req.get("name", "")
			if not NAME_RE.match(name):
				raise invalid("resource.name", name, "Must be a match of regex "
				    "'[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?'")
			props = req.get("properties") or {}
			if not props.get("machineType"):
				raise invalid("resource.properties.machineType", "", "Must be specified.")
			boot = [d for d in props.get("disks", []) if d.get("boot")]
			if len(boot) != 1 or not boot[0].get("initializeParams", {}).get("sourceImage"):
				raise invalid("resource.properties.disks", "", "Exactly one boot disk with a "
				    "source image must be specified.")
			sched = props.get("scheduling", {})
			if sched.get("provisioningModel") == "SPOT" and sched.get("automaticRestart"):
				raise invalid("resource.properties.scheduling.automaticRestart", "true",
				    "Spot VMs cannot be restarted automatically.")
			for k, v in props.get("labels", {}).items():
				if not re.fullmatch(r"[a-z][-_a-z0-9]{0,62}", k) or not re.fullmatch(
				    r"[-_a-z0-9]{0,63}", v):
					raise invalid("resource.properties.labels", v, "Label value '%s' "
					    "violates format constraints." % v)
			if name in st.templates:
				raise GError(409, "alreadyExists", "The resource 'projects/%s/global/"
				    "instanceTemplates/%s' already exists" % (st.project, name))
			t = {"kind": "compute#instanceTemplate", "id": st.id(),
			     "creationTimestamp": now_rfc3339(), "name": name,
			     "description": req.get("description", ""), "properties": props,
			     "selfLink": st.base() + "global/instanceTemplates/" + name}
			st.templates[name] = t
			return st.op("insert", t["selfLink"], t["id"],
			    undo=lambda: st.templates.pop(name, None))
		if len(p) == 1:
			t = st.templates.get(p[0])
			if t is None:
				raise not_found("projects/%s/global/instanceTemplates/%s" % (st.project, p[0]))
			if method == "GET":
				return t
			if method == "DELETE":
				for g in st.groups.values():
					if g["instanceTemplate"].rsplit("/", 1)[1] == p[0]:
						raise GError(400, "resourceInUseByAnotherResource", "The "
						    "instance_template resource 'projects/%s/global/"
						    "instanceTemplates/%s' is already being used by 'projects/%s/"
						    "regions/%s/instanceGroupManagers/%s'" % (st.project, p[0],
						    st.project, g["_region"], g["name"]))
				del st.templates[p[0]]
				return st.op("delete", t["selfLink"], t["id"])
		raise GError(404, "notFound", "Not Found")

	def groups(self, method, region, p, q, req):
		st = self.server.state
		if not p and method == "POST":
			name = req.get("name", "")
			if not NAME_RE.match(name):
				raise invalid("resource.name", name, "Must be a match of regex "
				    "'[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?'")
			if (region, name) in st.groups:
				raise GError(409, "alreadyExists", "The resource 'projects/%s/regions/%s/"
				    "instanceGroupManagers/%s' already exists" % (st.project, region, name))
			tname = (req.get("instanceTemplate") or "").rsplit("/", 1)[-1]
			if tname not in st.templates:
				raise not_found("projects/%s/global/instanceTemplates/%s" % (st.project,
				    tname))
			size = req.get("targetSize")
			if not isinstance(size, int) or size < 0:
				raise invalid("resource.targetSize", size, "Must be a non-negative integer.")
			dp = req.get("distributionPolicy") or {}
			zones = [z.get("zone", "").rsplit("/", 1)[-1] for z in dp.get("zones", [])]
			for z in zones:
				if region_of(z) != region:
					raise invalid("resource.distributionPolicy.zones", z, "Zone must be "
					    "in region %s." % region)
			if not zones:
				zones = [region + "-a", region + "-b", region + "-c"]
			shape = dp.get("targetShape", "EVEN")
			redis = (req.get("updatePolicy") or {}).get("instanceRedistributionType",
			    "PROACTIVE")
			if shape != "EVEN" and redis != "NONE":
				raise invalid("resource.updatePolicy.instanceRedistributionType", redis,
				    "Proactive redistribution is not supported for target distribution "
				    "shape %s." % shape)
			link = st.base() + "regions/%s/instanceGroupManagers/%s" % (region, name)
			g = {"kind": "compute#instanceGroupManager", "id": st.id(),
			     "creationTimestamp": now_rfc3339(), "name": name,
			     "description": req.get("description", ""),
			     "region": st.base() + "regions/" + region,
			     "distributionPolicy": {"zones": [{"zone": st.base() + "zones/" + z} for z in
			     zones], "targetShape": shape},
			     "instanceTemplate": st.base() + "global/instanceTemplates/" + tname,
			     "versions": [{"instanceTemplate": st.base() + "global/instanceTemplates/" +
			     tname, "targetSize": {"calculated": size}}],
			     "instanceGroup": st.base() + "regions/%s/instanceGroups/%s" % (region, name),
			     "baseInstanceName": req.get("baseInstanceName") or name,
			     "fingerprint": base64.b64encode(os.urandom(8)).decode(),
			     "targetSize": size, "selfLink": link,
			     "updatePolicy": {"type": "OPPORTUNISTIC", "instanceRedistributionType": redis,
			     "minimalAction": "REPLACE", "maxSurge": {"fixed": len(zones), "calculated":
			     len(zones)}, "maxUnavailable": {"fixed": len(zones), "calculated":
			     len(zones)}, "replacementMethod": "SUBSTITUTE"},
			     "listManagedInstancesResults": "PAGELESS",
			     "_region": region, "_slots": []}
			st.groups[(region, name)] = g
			return st.op("insert", link, g["id"], "region", region,
			    undo=lambda: st.groups.pop((region, name), None))
		if not p:
			raise GError(404, "notFound", "Not Found")
		g = st.groups.get((region, p[0]))
		if g is None:
			raise not_found("projects/%s/regions/%s/instanceGroupManagers/%s" % (st.project,
			    region, p[0]))
		if len(p) == 1 and method == "GET":
			return st.group_view(g)
		if len(p) == 1 and method == "DELETE":
			for s in g["_slots"]:
				st.drop((s["zone"], s["name"]))
			del st.groups[(region, p[0])]
			return st.op("delete", g["selfLink"], g["id"], "region", region)
		if len(p) == 2 and p[1] == "resize" and method == "POST":
			if not q.get("size", "").isdigit():
				raise invalid("size", q.get("size", ""), "Must be a non-negative integer.")
			old = g["targetSize"]

			def undo():
				g["targetSize"] = old
				g["versions"][0]["targetSize"]["calculated"] = old
			g["targetSize"] = int(q["size"])
			g["versions"][0]["targetSize"]["calculated"] = g["targetSize"]
			return st.op("compute.instanceGroupManagers.resize", g["selfLink"], g["id"],
			    "region", region, undo=undo)
		if len(p) == 2 and p[1] == "listManagedInstances" and method == "POST":
			out = []
			for s in g["_slots"]:
				m = {"instance": st.base() + "zones/%s/instances/%s" % (s["zone"], s["name"]),
				     "name": s["name"], "currentAction": "NONE" if s["created"] else
				     "CREATING", "version": {"instanceTemplate": g["instanceTemplate"]}}
				inst = st.instances.get((s["zone"], s["name"]))
				if inst is not None:
					m["id"] = inst["id"]
					m["instanceStatus"] = inst["status"]
				m["lastAttempt"] = {"errors": {"errors": [s["error"]]}} if s["error"] else {}
				out.append(m)
			return {"managedInstances": out}
		raise GError(404, "notFound", "Not Found")

	def aggregated(self, what, q):
		st = self.server.state
		if what == "instanceGroupManagers":
			key, kind = "instanceGroupManagers", "compute#instanceGroupManagerAggregatedList"
			res = [("regions/" + g["_region"], st.group_view(g)) for _, g in
			    sorted(st.groups.items())]
			scopes = sorted({"regions/" + r for r, _ in st.groups} | {"regions/us-central1",
			    "regions/europe-west4"})
		elif what == "instances":
			key, kind = "instances", "compute#instanceAggregatedList"
			res = [("zones/" + z, i) for (z, _), i in sorted(st.instances.items())
			    if self.matches(i, q)]
			scopes = sorted({"zones/" + z for z, _ in st.instances} | {"zones/us-central1-a",
			    "zones/europe-west4-b"})
		else:
			raise GError(404, "notFound", "Not Found")
		chunk, token = self.page(res, q)
		items = {}
		for s in scopes:
			got = [r for sc, r in chunk if sc == s]
			if got:
				items[s] = {key: got}
			else:
				items[s] = {"warning": {"code": "NO_RESULTS_ON_PAGE", "message": "There are "
				    "no results for scope '%s' on this page." % s, "data": [{"key": "scope",
				    "value": s}]}}
		out = {"kind": kind, "id": "projects/%s/aggregated/%s" % (st.project, what),
		       "items": items, "selfLink": st.base() + "aggregated/" + what}
		if token:
			out["nextPageToken"] = token
		return out


def main():
	ap = argparse.ArgumentParser(description="An emulator of Compute Engine for tests.")
	ap.add_argument("--port-file", required=True)
	ap.add_argument("--project", required=True)
	ap.add_argument("--users")
	ap.add_argument("--sa")
	ap.add_argument("--token-ttl", type=int, default=3600)
	ap.add_argument("--op-polls", type=int, default=0)
	ap.add_argument("--page-size", type=int, default=500)
	ap.add_argument("--log")
	ap.add_argument("--log-times", action="store_true",
	    help="each request's line ends with t=SECONDS, when it was answered")
	ap.add_argument("--image", action="append")
	ap.add_argument("--on-instance")
	ap.add_argument("--grace", type=float, default=30.0)
	ap.add_argument("--vm-dir")
	a = ap.parse_args()
	srv = Server(("127.0.0.1", 0), Handler)
	srv.state = State(a)
	srv.log = open(a.log, "a") if a.log else None
	srv.log_times = a.log_times
	srv.log_lock = threading.Lock()

	def log(line):
		if srv.log:
			with srv.log_lock:
				srv.log.write(line + "\n")
				srv.log.flush()
	srv.state.log = log
	serve(srv, a.port_file)


if __name__ == "__main__":
	main()
