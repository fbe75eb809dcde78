#!/usr/bin/python3
# armemu.py: an emulator of the parts of Azure Resource Manager's REST API
# that spotrun's Azure engine drives (cloud/azure/), with Microsoft Entra
# ID's client-credentials token endpoint and the instance metadata
# service's managed-identity token, for its tests (no Azure is reachable
# from a test machine, and Microsoft publishes no emulator of ARM). Python
# 3 standard library only; in-memory; HTTP on 127.0.0.1 at a port the
# kernel chooses, written to --port-file once it listens.
#
# What it emulates, from the REST references (learn.microsoft.com/rest/
# api: resources/resource-groups create-or-update/get/delete/list;
# virtualnetwork/virtual-networks create-or-update/delete/list-all;
# compute/virtual-machine-scale-sets create-or-update/update/get/delete/
# list-all; compute/virtual-machines list with $filter; "Track
# asynchronous Azure operations"; identity-platform v2-oauth2-client-
# creds-grant-flow; managed identities' "How to use managed identities
# for Azure resources on an Azure VM to acquire an access token"):
#
#  - paths /subscriptions/SUB/... with ?api-version= (without: 400
#    MissingApiVersionParameter); another subscription: 404
#    SubscriptionNotFound;
#  - "Authorization: Bearer TOKEN" with a token issued here, else 401
#    InvalidAuthenticationToken;
#  - errors as ARM writes them: {"error": {"code": ..., "message": ...}}:
#    404 ResourceGroupNotFound, ResourceNotFound; 400 InvalidParameter for
#    a scale set body that is not a Flexible set of Spot VMs as the engine
#    must send it (orchestrationMode, priority, evictionPolicy,
#    billingProfile.maxPrice, platformFaultDomainCount, sku, osProfile with
#    an SSH key and base64 customData, a subnet of an existing network);
#  - mutations are long-running: a scale set's or network's PUT and a
#    set's PATCH answer 201/200 with Azure-AsyncOperation (a status
#    document: InProgress for --op-polls polls, then Succeeded or Failed
#    with its error); a DELETE answers 202 with Location (202 for
#    --op-polls polls, then 200); Retry-After: 0;
#  - a Flexible set keeps sku.capacity VMs (NAME_xxxxxxxx, their
#    virtualMachineScaleSet.id the set's) round the set's zones that have
#    capacity, each with its vmId (a GUID) and timeCreated ("2021-06-03T
#    01:07:44.8563587+00:00", the reference's form), priority Spot, its
#    size and zone; none: the operation fails with the injected code; a
#    deleted set takes its VMs; a deleted resource group takes all it
#    holds;
#  - lists page by --page-size with nextLink; resource groups' $filter
#    tagName eq 'K' and tagValue eq 'V' (else 400 InvalidFilterInQueryString);
#    virtualMachines' $filter 'virtualMachineScaleSet/id' eq 'ID';
#  - POST /TENANT/oauth2/v2.0/token, grant_type client_credentials with
#    client_id and client_secret of --principal, scope
#    https://management.azure.com/.default: {"token_type": "Bearer",
#    "expires_in", "access_token"}, else 401 invalid_client (AADSTS7000215)
#    or 400 invalid_scope / unsupported_grant_type;
#  - GET /metadata/identity/oauth2/token?resource=... with "Metadata: true"
#    (else 400 invalid_request) and /metadata/instance/compute/
#    subscriptionId?format=text, as the metadata service answers.
#
# For the Azure CLI (az 2.45 on MSAL 1.21), which speaks only HTTPS and
# drops the port of a Microsoft Entra authority (and asks
# login.microsoftonline.com to validate one), --tls-port-file serves the
# same state over HTTPS too (--tls-cert, --tls-key), with an authority of
# the AD FS shape, which MSAL keeps the port of and validates itself
# (registered with `az cloud register --endpoint-active-directory
# https://127.0.0.1:PORT/adfs`): GET /adfs/.well-known/openid-configuration
# (the OpenID Connect discovery document), POST /adfs/oauth2/token (the
# client-credentials grant of a --principal of tenant "adfs", any scope
# RESOURCE/.default of ARM's two resource ids), and GET /subscriptions
# (the subscription, as `az login` lists it).
#
# Test hooks (no auth; not ARM's): POST /emu/capacity?region=R&size=S
# &zone=Z&code=C makes R refuse S (any size without size; any zone, or
# the regional set, without zone) with C: SkuNotAvailable and
# OperationNotAllowed at the call (409), ZonalAllocationFailed and
# AllocationFailed in the operation; without code: capacity again. POST
# /emu/evict?set=NAME[&count=N][&restore=0] deletes a set's VMs (the
# first N) as an eviction with policy Delete does: a set whose
# spotRestorePolicy is enabled gets them back at once where its size has
# capacity (Try & Restore); otherwise, or with restore=0 (Try & Restore
# gave up), the set's capacity drops by as many ("you can create new VMs
# by increasing the scale set instance count property"); /emu/evict?vm=NAME
# evicts that VM alike. POST /emu/expire forgets every token (the next
# call is 401).
# POST /emu/http-error?status=S&code=C&count=N answers the next N ARM
# requests with S and C. GET /emu/dump: every group, network, set and VM
# as ARM writes them; GET /emu/state: their names (lowercase; networks and
# sets GROUP/NAME, VMs by name).
#
# VMs as processes (not ARM's): with --on-instance CMD each VM made runs
# `CMD HOST FILE` (through sh; HOST the VM's computer name, the set's
# computerNamePrefix and 6 hex digits; FILE the set's customData decoded,
# written under --vm-dir, else $TMPDIR) in a session of its own, so that a
# test boots it as a VM (tests/jobs/vm.sh); a VM deleted, whichever way
# (evicted, its set scaled in or deleted, its group deleted), is shut
# down: SIGTERM to that process, its process group killed if still there
# after --grace seconds (30: a Spot VM's notice). The log says "instance
# NAME: booted, pid P", "...: shutdown", "...: powered off after S s" and
# "...: exited CODE" (or "on signal N").
import argparse
import base64
import http.server
import json
import os
import re
import secrets
import ssl
import threading
import time
import urllib.parse
import uuid

from gcsemu import Server, serve
from vmproc import VMs

MGMT = "https://management.azure.com/"
# ARM's resource ids as the Azure CLI names them in a scope
ARM_RESOURCES = (MGMT, "https://management.core.windows.net/")
CAPACITY_MESSAGES = {
	"SkuNotAvailable": "The requested VM size for resource 'Following SKUs have failed for "
	    "Capacity Restrictions: {s}' is currently not available in location '{r}'. Please try "
	    "another size or deploy to a different location or different zone. See "
	    "https://aka.ms/azureskunotavailable for details.",
	"OperationNotAllowed": "Operation could not be completed as it results in exceeding "
	    "approved LowPriorityCores quota. Additional details - Deployment Model: Resource "
	    "Manager, Location: {r}, Current Limit: 0, Current Usage: 0, Additional Required: 4, "
	    "(Minimum) New Limit Required: 4.",
	"ZonalAllocationFailed": "Allocation failed. We do not have sufficient capacity for the "
	    "requested VM size in this zone. Read more about improving likelihood of allocation "
	    "success at http://aka.ms/allocation-guidance",
	"AllocationFailed": "Allocation failed. We do not have sufficient capacity for the "
	    "requested VM size in this region. Read more about improving likelihood of allocation "
	    "success at http://aka.ms/allocation-guidance",
}
SYNC_CODES = ("SkuNotAvailable", "OperationNotAllowed")
NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,89}$")
TAG_FILTER = re.compile(r"^tagName eq '([^']+)' and tagValue eq '([^']*)'$")
VM_FILTER = re.compile(r"^'virtualMachineScaleSet/id' eq '([^']+)'$")


class ArmError(Exception):
	def __init__(self, status, code, message):
		super().__init__(message)
		self.status, self.code, self.message = status, code, message

	def doc(self):
		return {"error": {"code": self.code, "message": self.message}}


def not_found(kind, name, group):
	return ArmError(404, "ResourceNotFound", "The Resource '%s/%s' under resource group '%s' "
	    "was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix" %
	    (kind, name, group))


def bad(msg):
	return ArmError(400, "InvalidParameter", msg)


class State:
	def __init__(self, a):
		self.lock = threading.RLock()
		self.sub = a.subscription
		self.tenant = a.tenant
		self.principals = {}		# (tenant, client) -> secret
		for p in a.principal or []:
			t, c, s = p.split(":", 2)
			self.principals[(t, c)] = s
		self.ttl = a.token_ttl
		self.polls = a.op_polls
		self.page = a.page_size
		self.tokens = {}
		self.groups = {}		# lower(name) -> obj
		self.vnets = {}			# (lower(group), lower(name)) -> obj
		self.sets = {}			# (lower(group), lower(name)) -> obj
		self.vms = []			# objs, each with "_set": the set's key
		self.ops = {}			# id -> [polls left, final doc or status, async]
		self.capacity = []		# (region, size or None, zone or None, code)
		self.http_errors = []
		self.logf = lambda line: None
		self.vmp = VMs(a.on_instance, a.grace, a.vm_dir, lambda line: self.logf(line))

	# ---- VMs as processes (--on-instance) ----

	def boot(self, v):
		"""Run --on-instance for VM v just made (tests/vmproc.py): its host
		name its computer name, its user-data its set's customData
		decoded."""
		s = self.sets[v["_set"]]
		cd = s["properties"]["virtualMachineProfile"]["osProfile"].get("customData", "")
		self.vmp.boot(v["name"], v["properties"]["osProfile"]["computerName"],
		    base64.b64decode(cd))

	def remove(self, gone):
		"""Delete the VMs gone; each one's process, if any, is shut down
		as a VM is (tests/vmproc.py)."""
		for v in gone:
			self.vms.remove(v)
			self.vmp.shutdown(v["name"])

	def rid(self, group, kind=None, name=None):
		s = "/subscriptions/%s/resourceGroups/%s" % (self.sub, group)
		return s + ("/providers/%s/%s" % (kind, name) if kind else "")

	def op(self, region, done, is_async):
		oid = secrets.token_hex(8)
		self.ops[oid] = [self.polls, done, is_async]
		return oid

	def blocked(self, region, size, zone):
		for r, s, z, code in self.capacity:
			if r == region and s in (None, size) and z in (None, zone):
				return code
		return None

	def fill(self, key):
		"""Bring set key to its capacity: None, or the code that stopped it."""
		s = self.sets[key]
		mine = [v for v in self.vms if v["_set"] == key]
		want = s["sku"]["capacity"]
		while len(mine) > want:
			self.remove([mine.pop()])
		zones = s.get("zones") or [None]
		open_ = [z for z in zones if not self.blocked(s["location"], s["sku"]["name"], z)]
		if len(mine) < want and not open_:
			return self.blocked(s["location"], s["sku"]["name"], zones[0])
		i = len(mine)
		while len(mine) < want:
			z = open_[i % len(open_)]
			i += 1
			name = "%s_%s" % (s["name"], secrets.token_hex(4))
			v = {"name": name, "id": self.rid(key[0], "Microsoft.Compute/virtualMachines", name),
			    "type": "Microsoft.Compute/virtualMachines", "location": s["location"],
			    "tags": dict(s.get("tags", {})), "_set": key,
			    "properties": {"provisioningState": "Succeeded", "vmId": str(uuid.uuid4()),
			        "timeCreated": now_arm(), "osProfile": {"computerName": s["properties"][
			        "virtualMachineProfile"]["osProfile"]["computerNamePrefix"] +
			        secrets.token_hex(3)},
			        "priority": "Spot", "evictionPolicy": "Delete",
			        "hardwareProfile": {"vmSize": s["sku"]["name"]},
			        "virtualMachineScaleSet": {"id": s["id"]}}}
			if z is not None:
				v["zones"] = [z]
			self.vms.append(v)
			mine.append(v)
			self.boot(v)
		return None


def now_arm():
	"""Now as ARM writes a VM's timeCreated: "2021-06-03T01:07:44.8563587+00:00"."""
	t = time.time()
	return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%07d+00:00" % (
	    int(t * 1e7) % 10000000)


class Handler(http.server.BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"

	def log_message(self, fmt, *args):
		pass

	def do_GET(self):
		self.serve("GET")

	def do_POST(self):
		self.serve("POST")

	def do_PUT(self):
		self.serve("PUT")

	def do_PATCH(self):
		self.serve("PATCH")

	def do_DELETE(self):
		self.serve("DELETE")

	def log(self, line):
		if self.server.log:
			with self.server.log_lock:
				self.server.log.write(line + "\n")
				self.server.log.flush()

	def reply(self, status, obj, headers=None, raw=None):
		body = raw if raw is not None else (b"" if obj is None else
		    (json.dumps(obj, indent=1) + "\n").encode())
		self.log("%s %s %d" % (self.command, urllib.parse.unquote(self.path), status) +
		    (" t=%.6f" % time.time() if self.server.log_times else ""))
		self.send_response(status)
		self.send_header("Content-Type", "text/plain" if raw is not None else
		    "application/json; charset=utf-8")
		self.send_header("Content-Length", str(len(body)))
		for k, v in (headers or {}).items():
			self.send_header(k, v)
		self.end_headers()
		self.wfile.write(body)

	def base(self):
		return "%s://%s" % (self.server.scheme, self.headers.get("Host"))

	def serve(self, method):
		n = int(self.headers.get("Content-Length") or 0)
		body = self.rfile.read(n) if n else b""
		u = urllib.parse.urlsplit(self.path)
		q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
		st = self.server.state
		try:
			with st.lock:
				if u.path.endswith("/oauth2/v2.0/token") and method == "POST":
					return self.token(u.path.split("/")[1], body)
				if u.path == "/adfs/oauth2/token" and method == "POST":
					return self.token("adfs", body)
				if u.path == "/adfs/.well-known/openid-configuration" and method == "GET":
					return self.discovery()
				if u.path.startswith("/metadata/"):
					return self.metadata(u.path, q)
				if u.path.startswith("/emu/"):
					return self.hook(method, u.path, q)
				if u.path.rstrip("/") == "/subscriptions" and method == "GET":
					self.authorize()
					return self.subscriptions()
				if not u.path.startswith("/subscriptions/"):
					raise ArmError(404, "NotFound", "Not Found")
				self.authorize()
				if st.http_errors:
					status, code = st.http_errors.pop(0)
					raise ArmError(status, code, "Injected %s." % code)
				if "api-version" not in q:
					raise ArmError(400, "MissingApiVersionParameter", "The api-version "
					    "query parameter (?api-version=) is required for all requests.")
				rest = u.path[len("/subscriptions/"):].split("/")
				if rest[0] != st.sub:
					raise ArmError(404, "SubscriptionNotFound", "The subscription '%s' "
					    "could not be found." % rest[0])
				return self.arm(method, rest[1:], q, body)
		except ArmError as e:
			return self.reply(e.status, e.doc())

	def authorize(self):
		h = self.headers.get("Authorization", "")
		tok = h[7:] if h.startswith("Bearer ") else None
		exp = self.server.state.tokens.get(tok)
		if exp is None or exp < time.time():
			raise ArmError(401, "InvalidAuthenticationToken", "The access token is invalid.")

	def issue(self):
		st = self.server.state
		tok = "eyJ0eXAiOiJKV1Qi." + secrets.token_urlsafe(24)
		st.tokens[tok] = time.time() + st.ttl
		return tok

	def token(self, tenant, body):
		st = self.server.state
		f = dict(urllib.parse.parse_qsl(body.decode(errors="replace"), keep_blank_values=True))

		def oauth(status, code, desc):
			self.log("token refused %s" % code)
			return self.reply(status, {"error": code, "error_description": desc})
		if f.get("grant_type") != "client_credentials":
			return oauth(400, "unsupported_grant_type", "AADSTS70003: The app requested an "
			    "unsupported grant type.")
		scopes = [MGMT + ".default"] if tenant != "adfs" else [r + ext for r in
		    ARM_RESOURCES for ext in (".default", "/.default")]
		if f.get("scope") not in scopes:
			return oauth(400, "invalid_scope", "AADSTS70011: The provided value for the "
			    "input parameter 'scope' is not valid.")
		secret = st.principals.get((tenant, f.get("client_id")))
		if secret is None or f.get("client_secret") != secret:
			return oauth(401, "invalid_client", "AADSTS7000215: Invalid client secret "
			    "provided. Ensure the secret being sent in the request is the client secret "
			    "value, not the client secret ID, for a secret added to app '%s'." %
			    f.get("client_id"))
		self.log("token grant=client_credentials tenant=%s client=%s" % (tenant,
		    f.get("client_id")))
		return self.reply(200, {"token_type": "Bearer", "expires_in": st.ttl,
		    "ext_expires_in": st.ttl, "access_token": self.issue()})

	def discovery(self):
		"""The AD FS authority's OpenID Connect discovery document."""
		a = self.base() + "/adfs"
		return self.reply(200, {"issuer": a, "authorization_endpoint": a + "/oauth2/authorize",
		    "token_endpoint": a + "/oauth2/token", "device_authorization_endpoint": a +
		    "/oauth2/devicecode", "jwks_uri": a + "/discovery/keys",
		    "response_types_supported": ["code", "id_token", "code id_token", "token"],
		    "grant_types_supported": ["authorization_code", "refresh_token",
		        "client_credentials", "device_code"],
		    "token_endpoint_auth_methods_supported": ["client_secret_post",
		        "client_secret_basic"]})

	def subscriptions(self):
		"""GET /subscriptions: the one subscription, as ARM lists it."""
		st = self.server.state
		return self.reply(200, {"value": [{"id": "/subscriptions/" + st.sub,
		    "authorizationSource": "RoleBased", "managedByTenants": [],
		    "subscriptionId": st.sub, "tenantId": st.tenant, "displayName": "emulated",
		    "state": "Enabled", "subscriptionPolicies": {"locationPlacementId":
		        "Public_2014-09-01", "quotaId": "PayAsYouGo_2014-09-01",
		        "spendingLimit": "Off"}}]})

	def metadata(self, path, q):
		st = self.server.state
		if self.headers.get("Metadata") != "true":
			return self.reply(400, {"error": "invalid_request", "error_description":
			    "Required metadata header not specified"})
		if path == "/metadata/identity/oauth2/token":
			if q.get("resource") != MGMT:
				return self.reply(400, {"error": "invalid_resource", "error_description":
				    "AADSTS500011: The resource principal was not found."})
			self.log("token managed-identity client=%s" % q.get("client_id", ""))
			now = int(time.time())
			return self.reply(200, {"access_token": self.issue(), "expires_in": str(st.ttl),
			    "expires_on": str(now + st.ttl), "resource": MGMT, "token_type": "Bearer"})
		if path == "/metadata/instance/compute/subscriptionId" and q.get("format") == "text":
			return self.reply(200, None, raw=st.sub.encode())
		return self.reply(404, {"error": "Not found"})

	def hook(self, method, path, q):
		st = self.server.state
		if path == "/emu/capacity" and method == "POST":
			r, s, z = q["region"], q.get("size") or None, q.get("zone") or None
			st.capacity = [c for c in st.capacity if c[:3] != (r, s, z)]
			if q.get("code"):
				st.capacity.append((r, s, z, q["code"]))
			return self.reply(200, {})
		if path == "/emu/evict" and method == "POST":
			gone = [v for v in st.vms if v["_set"][1] == q.get("set", "").lower() or
			    v["name"] == q.get("vm")]
			gone = gone[:int(q.get("count", len(gone)))]
			st.remove(gone)
			restored = 0
			for key in sorted(set(v["_set"] for v in gone)):
				s = st.sets[key]
				n = sum(1 for v in gone if v["_set"] == key)
				pol = s["properties"].get("spotRestorePolicy", {})
				if pol.get("enabled") and q.get("restore") != "0" and st.fill(key) is None:
					restored += n
				else:
					s["sku"]["capacity"] -= n
			return self.reply(200, {"evicted": len(gone), "restored": restored})
		if path == "/emu/expire" and method == "POST":
			st.tokens.clear()
			return self.reply(200, {})
		if path == "/emu/http-error" and method == "POST":
			for _ in range(int(q.get("count", "1"))):
				st.http_errors.append((int(q["status"]), q["code"]))
			return self.reply(200, {})
		if path == "/emu/dump" and method == "GET":
			strip = lambda v: {k: x for k, x in v.items() if k != "_set"}
			return self.reply(200, {"groups": list(st.groups.values()),
			    "vnets": list(st.vnets.values()), "sets": list(st.sets.values()),
			    "vms": [strip(v) for v in st.vms]})
		if path == "/emu/state" and method == "GET":
			return self.reply(200, {"groups": sorted(st.groups), "vnets": sorted(
			    "%s/%s" % k for k in st.vnets), "sets": sorted("%s/%s" % k for k in st.sets),
			    "vms": sorted(v["name"] for v in st.vms)})
		return self.reply(404, {"error": {"code": "NotFound", "message": "no hook " + path}})

	# ---- ARM ----

	def op_url(self, region, oid, q):
		return "%s/subscriptions/%s/providers/Microsoft.Compute/locations/%s/operations/%s" \
		    "?api-version=%s" % (self.base(), self.server.state.sub, region, oid, q["api-version"])

	def lro(self, status, obj, region, q, fail=None, delete=False):
		"""Answer a long-running call: its op done now, reported after the polls."""
		st = self.server.state
		oid = st.op(region, fail, not delete)
		h = {"Retry-After": "0"}
		if delete:
			h["Location"] = self.op_url(region, oid, q) + "&monitor=true"
		else:
			h["Azure-AsyncOperation"] = self.op_url(region, oid, q)
		return self.reply(status, obj, headers=h)

	def poll(self, oid):
		st = self.server.state
		o = st.ops.get(oid)
		if o is None:
			raise ArmError(404, "NotFound", "The operation '%s' was not found." % oid)
		if o[0] > 0:
			o[0] -= 1
			if o[2]:
				return self.reply(200, {"name": oid, "status": "InProgress"},
				    headers={"Retry-After": "0"})
			return self.reply(202, None, headers={"Retry-After": "0"})
		if not o[2]:
			return self.reply(200, None)
		if o[1] is None:
			return self.reply(200, {"name": oid, "status": "Succeeded"})
		return self.reply(200, {"name": oid, "status": "Failed", "error": o[1]})

	def page(self, items, q, path):
		st = self.server.state
		start = int(q.get("$skiptoken", "0"))
		out = {"value": items[start:start + st.page]}
		if start + st.page < len(items):
			nq = dict(q)
			nq["$skiptoken"] = str(start + st.page)
			out["nextLink"] = "%s%s?%s" % (self.base(), path, urllib.parse.urlencode(nq,
			    quote_via=urllib.parse.quote))
		return out

	def arm(self, method, rest, q, body):
		st = self.server.state
		path = urllib.parse.urlsplit(self.path).path
		low = [x.lower() for x in rest]
		if len(rest) == 5 and low[:2] == ["providers", "microsoft.compute"] and \
		    low[2] == "locations" and method == "GET":
			raise ArmError(404, "NotFound", "no operation")
		if len(rest) == 6 and low[:2] == ["providers", "microsoft.compute"] and \
		    low[4] == "operations" and method == "GET":
			return self.poll(rest[5])
		if len(rest) == 2 and low[0] == "operationresults" and method == "GET":
			return self.poll(rest[1])
		if low == ["providers", "microsoft.compute", "virtualmachinescalesets"] and \
		    method == "GET":
			return self.reply(200, self.page(list(st.sets.values()), q, path))
		if low == ["providers", "microsoft.network", "virtualnetworks"] and method == "GET":
			return self.reply(200, self.page(list(st.vnets.values()), q, path))
		if low == ["resourcegroups"] and method == "GET":
			items = list(st.groups.values())
			if "$filter" in q:
				m = TAG_FILTER.match(q["$filter"])
				if not m:
					raise ArmError(400, "InvalidFilterInQueryString", "Invalid $filter "
					    "'%s' specified in the query string." % q["$filter"])
				items = [g for g in items if g.get("tags", {}).get(m.group(1)) == m.group(2)]
			return self.reply(200, self.page(items, q, path))
		if len(rest) < 2 or low[0] != "resourcegroups" or not NAME_RE.match(rest[1]):
			raise ArmError(404, "NotFound", "Not Found")
		gname = rest[1]
		g = st.groups.get(gname.lower())
		if len(rest) == 2:
			return self.group(method, gname, g, q, body)
		if g is None:
			raise ArmError(404, "ResourceGroupNotFound", "Resource group '%s' could not be "
			    "found." % gname)
		kind = "/".join(low[2:5])
		if kind == "providers/microsoft.compute/virtualmachines" and len(rest) == 5 and \
		    method == "GET":
			m = VM_FILTER.match(q.get("$filter", ""))
			items = [v for v in st.vms if v["_set"][0] == gname.lower()]
			if q.get("$filter") is not None:
				if not m:
					raise ArmError(400, "InvalidParameter", "The value of parameter "
					    "$filter is invalid.")
				items = [v for v in items if v["properties"]["virtualMachineScaleSet"]["id"]
				    .lower() == m.group(1).lower()]
			strip = lambda v: {k: x for k, x in v.items() if k != "_set"}
			return self.reply(200, self.page([strip(v) for v in items], q, path))
		if len(rest) != 6 or not NAME_RE.match(rest[5]):
			raise ArmError(404, "NotFound", "Not Found")
		if kind == "providers/microsoft.network/virtualnetworks":
			return self.vnet(method, g, rest[5], q, body)
		if kind == "providers/microsoft.compute/virtualmachinescalesets":
			return self.vmss(method, g, rest[5], q, body)
		raise ArmError(404, "NotFound", "Not Found")

	def group(self, method, name, g, q, body):
		st = self.server.state
		if method == "GET":
			if g is None:
				raise ArmError(404, "ResourceGroupNotFound", "Resource group '%s' could not "
				    "be found." % name)
			return self.reply(200, g)
		if method == "PUT":
			b = json.loads(body or b"{}")
			if not isinstance(b.get("location"), str):
				raise bad("The 'location' property is required for this definition.")
			new = g is None
			g = {"id": "/subscriptions/%s/resourceGroups/%s" % (st.sub, name), "name": name,
			    "type": "Microsoft.Resources/resourceGroups", "location": b["location"],
			    "tags": b.get("tags", {}), "properties": {"provisioningState": "Succeeded"}}
			st.groups[name.lower()] = g
			return self.reply(201 if new else 200, g)
		if method == "DELETE":
			if g is None:
				raise ArmError(404, "ResourceGroupNotFound", "Resource group '%s' could not "
				    "be found." % name)
			k = name.lower()
			del st.groups[k]
			st.vnets = {x: v for x, v in st.vnets.items() if x[0] != k}
			st.sets = {x: v for x, v in st.sets.items() if x[0] != k}
			st.remove([v for v in st.vms if v["_set"][0] == k])
			oid = st.op(g["location"], None, False)
			return self.reply(202, None, headers={"Retry-After": "0", "Location":
			    "%s/subscriptions/%s/operationresults/%s?api-version=%s" % (self.base(),
			    st.sub, oid, q["api-version"])})
		raise ArmError(405, "MethodNotAllowed", "The method is not allowed.")

	def vnet(self, method, g, name, q, body):
		st = self.server.state
		key = (g["name"].lower(), name.lower())
		v = st.vnets.get(key)
		if method == "PUT":
			b = json.loads(body or b"{}")
			subs = b.get("properties", {}).get("subnets", [])
			if not isinstance(b.get("location"), str) or not subs:
				raise bad("A virtual network needs a location and a subnet.")
			rid = st.rid(g["name"], "Microsoft.Network/virtualNetworks", name)
			v = {"id": rid, "name": name, "type": "Microsoft.Network/virtualNetworks",
			    "location": b["location"], "tags": b.get("tags", {}),
			    "properties": {"provisioningState": "Succeeded",
			        "addressSpace": b["properties"].get("addressSpace"),
			        "subnets": [{"id": rid + "/subnets/" + s["name"], "name": s["name"],
			            "properties": s.get("properties", {})} for s in subs]}}
			new = key not in st.vnets
			st.vnets[key] = v
			return self.lro(201 if new else 200, v, b["location"], q)
		if v is None:
			raise not_found("Microsoft.Network/virtualNetworks", name, g["name"])
		if method == "GET":
			return self.reply(200, v)
		if method == "DELETE":
			sid = v["id"].lower() + "/subnets/"
			for s in st.sets.values():
				for nic in s["properties"]["virtualMachineProfile"]["networkProfile"][
				    "networkInterfaceConfigurations"]:
					for ip in nic["properties"]["ipConfigurations"]:
						if ip["properties"]["subnet"]["id"].lower().startswith(sid):
							raise ArmError(400, "InUseSubnetCannotBeDeleted",
							    "Subnet default is in use by %s and cannot be deleted." %
							    s["id"])
			del st.vnets[key]
			return self.lro(202, None, v["location"], q, delete=True)
		raise ArmError(405, "MethodNotAllowed", "The method is not allowed.")

	def check_vmss(self, b):
		"""The body as the engine must send it, else InvalidParameter."""
		st = self.server.state
		p = b.get("properties", {})
		vmp = p.get("virtualMachineProfile", {})
		if p.get("orchestrationMode") != "Flexible":
			raise bad("orchestrationMode must be Flexible for this emulator.")
		if not isinstance(p.get("platformFaultDomainCount"), int):
			raise bad("Required parameter 'platformFaultDomainCount' is missing (null).")
		if vmp.get("priority") != "Spot" or vmp.get("evictionPolicy") not in ("Delete",
		    "Deallocate"):
			raise bad("priority must be Spot with an evictionPolicy.")
		mp = vmp.get("billingProfile", {}).get("maxPrice")
		if not isinstance(mp, (int, float)) or (mp != -1 and mp <= 0):
			raise bad("billingProfile.maxPrice must be -1 or a positive price.")
		pol = p.get("spotRestorePolicy")
		if pol is not None and (not isinstance(pol.get("enabled"), bool) or
		    not re.fullmatch(r"PT(\d+H)?(\d+M)?(\d+S)?", pol.get("restoreTimeout", "PT1H")) or
		    pol.get("restoreTimeout") == "PT"):
			raise bad("spotRestorePolicy: enabled must be a boolean, restoreTimeout an ISO 8601 "
			    "duration.")
		sku = b.get("sku", {})
		if not isinstance(sku.get("name"), str) or not isinstance(sku.get("capacity"), int):
			raise bad("sku.name and sku.capacity are required.")
		os_ = vmp.get("osProfile", {})
		keys = os_.get("linuxConfiguration", {}).get("ssh", {}).get("publicKeys", [])
		if not os_.get("computerNamePrefix"):
			raise bad("Required parameter 'computerNamePrefix' is missing (null).")
		if not os_.get("adminUsername") or not keys or \
		    not keys[0].get("keyData", "").startswith("ssh-rsa AAAA"):
			raise bad("Required parameter 'adminPassword' is missing (null).")
		try:
			base64.b64decode(os_.get("customData", ""), validate=True)
		except ValueError:
			raise bad("customData must be base64.")
		ref = vmp.get("storageProfile", {}).get("imageReference", {})
		if not (ref.get("id") or all(ref.get(k) for k in ("publisher", "offer", "sku",
		    "version"))):
			raise bad("The imageReference is incomplete.")
		for nic in vmp.get("networkProfile", {}).get("networkInterfaceConfigurations", []):
			for ip in nic["properties"]["ipConfigurations"]:
				sid = ip["properties"]["subnet"]["id"]
				if not any(s["id"].lower() == sid.lower() for v in st.vnets.values()
				    for s in v["properties"]["subnets"]):
					raise ArmError(400, "InvalidResourceReference", "Resource %s "
					    "referenced by resource does not exist." % sid)
		if not vmp.get("networkProfile", {}).get("networkInterfaceConfigurations"):
			raise bad("networkInterfaceConfigurations is required.")

	def vmss(self, method, g, name, q, body):
		st = self.server.state
		key = (g["name"].lower(), name.lower())
		s = st.sets.get(key)
		if method == "PUT":
			b = json.loads(body or b"{}")
			self.check_vmss(b)
			region, size = b.get("location"), b["sku"]["name"]
			zones = b.get("zones") or [None]
			codes = [st.blocked(region, size, z) for z in zones]
			if all(codes) and codes[0] in SYNC_CODES:
				c = codes[0]
				raise ArmError(409, c, CAPACITY_MESSAGES[c].format(s=size, r=region))
			new = s is None
			s = {"id": st.rid(g["name"], "Microsoft.Compute/virtualMachineScaleSets", name),
			    "name": name, "type": "Microsoft.Compute/virtualMachineScaleSets",
			    "location": region, "tags": b.get("tags", {}), "sku": b["sku"],
			    "properties": dict(b["properties"], provisioningState="Succeeded",
			        uniqueId=secrets.token_hex(8))}
			if b.get("zones"):
				s["zones"] = b["zones"]
			if b.get("identity"):
				s["identity"] = b["identity"]
			st.sets[key] = s
			return self.settle(201 if new else 200, key, q)
		if s is None:
			raise not_found("Microsoft.Compute/virtualMachineScaleSets", name, g["name"])
		if method == "GET":
			return self.reply(200, s)
		if method == "PATCH":
			b = json.loads(body or b"{}")
			cap = b.get("sku", {}).get("capacity")
			if not isinstance(cap, int) or cap < 0:
				raise bad("sku.capacity must be a count.")
			zones = s.get("zones") or [None]
			codes = [st.blocked(s["location"], s["sku"]["name"], z) for z in zones]
			if cap > 0 and all(codes) and codes[0] in SYNC_CODES:
				raise ArmError(409, codes[0], CAPACITY_MESSAGES[codes[0]].format(
				    s=s["sku"]["name"], r=s["location"]))
			s["sku"]["capacity"] = cap
			return self.settle(200, key, q)
		if method == "DELETE":
			del st.sets[key]
			st.remove([v for v in st.vms if v["_set"] == key])
			return self.lro(202, None, s["location"], q, delete=True)
		raise ArmError(405, "MethodNotAllowed", "The method is not allowed.")

	def settle(self, status, key, q):
		"""Fill the set now; its operation reports how that went."""
		st = self.server.state
		s = st.sets[key]
		code = st.fill(key)
		fail = None
		s["properties"]["provisioningState"] = "Succeeded"
		if code is not None:
			s["properties"]["provisioningState"] = "Failed"
			fail = {"code": code, "message": CAPACITY_MESSAGES.get(code, code).format(
			    s=s["sku"]["name"], r=s["location"])}
		return self.lro(status, s, s["location"], q, fail=fail)


def main():
	ap = argparse.ArgumentParser(description="An emulator of Azure Resource Manager for tests.")
	ap.add_argument("--port-file", required=True)
	ap.add_argument("--subscription", required=True)
	ap.add_argument("--principal", action="append", help="TENANT:CLIENT:SECRET")
	ap.add_argument("--token-ttl", type=int, default=3600)
	ap.add_argument("--op-polls", type=int, default=1)
	ap.add_argument("--page-size", type=int, default=100)
	ap.add_argument("--log")
	ap.add_argument("--log-times", action="store_true",
	    help="each request's line ends with t=SECONDS, when it was answered")
	ap.add_argument("--on-instance", help="CMD run as each VM made: CMD HOST USERDATA")
	ap.add_argument("--grace", type=float, default=30.0)
	ap.add_argument("--vm-dir")
	ap.add_argument("--tenant", default="00000000-0000-0000-0000-000000000000",
	    help="the subscription's tenant, as GET /subscriptions says")
	ap.add_argument("--tls-port-file", help="serve HTTPS too, its port written here")
	ap.add_argument("--tls-cert")
	ap.add_argument("--tls-key")
	a = ap.parse_args()
	srv = Server(("127.0.0.1", 0), Handler)
	srv.state = State(a)
	srv.scheme = "http"
	srv.log = open(a.log, "a") if a.log else None
	srv.log_times = a.log_times
	srv.log_lock = threading.Lock()
	if a.tls_port_file:
		tls = Server(("127.0.0.1", 0), Handler)
		tls.state, tls.scheme, tls.log = srv.state, "https", srv.log
		tls.log_times, tls.log_lock = srv.log_times, srv.log_lock
		ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
		ctx.load_cert_chain(a.tls_cert, a.tls_key)
		tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
		tmp = a.tls_port_file + ".tmp"
		with open(tmp, "w") as f:
			f.write("%d\n" % tls.server_address[1])
		os.rename(tmp, a.tls_port_file)
		threading.Thread(target=tls.serve_forever, daemon=True).start()

	def log(line):
		if srv.log:
			with srv.log_lock:
				srv.log.write(line + "\n")
				srv.log.flush()
	srv.state.logf = log
	serve(srv, a.port_file)


if __name__ == "__main__":
	main()
