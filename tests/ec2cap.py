#!/usr/bin/env python3
# ec2cap.py: a proxy of the tests in front of moto (tests/ec2emu.py) that
# makes EC2 say "no capacity", which moto never does, for
# tests/t75-up-aws-failover.sh. It listens on 127.0.0.1 at a port the
# kernel chooses (written to --port-file) and passes every request to
# --upstream unchanged, except EC2's CreateFleet and DescribeFleets in
# the regions that --config (a JSON file, read again at each request)
# names:
#   {"REGION": {"when": "now"|"later", "code": "InsufficientInstanceCapacity",
#               "type": "g5.xlarge", "zone": "us-east-1a"}, ...}
# "now": CreateFleet answers HTTP 400 with EC2's error document (the one
# AWS sends: <Response><Errors><Error><Code>...<Message>...</Error></Errors>
# <RequestID>...</RequestID></Response>). "later": CreateFleet goes to moto
# with a target of 0 (so no instance launches), and that fleet's
# DescribeFleets item gets an errorSet as EC2's maintain fleet reports it
# (DescribeFleetError: launchTemplateAndOverrides/overrides with
# instanceType and availabilityZone, lifecycle, errorCode, errorMessage).
# The region is the SigV4 credential scope's. Each CreateFleet's region and
# answer is appended to --log ("REGION now CODE", "REGION later CODE",
# "REGION pass"); with --log-times each line ends " t=SECONDS" (when it was
# written), and a DescribeFleets given an errorSet adds "REGION errors
# CODE" (for bench/failover.sh). Runs until killed.
import argparse
import http.client
import json
import re
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MESSAGES = {
    "InsufficientInstanceCapacity":
        "We currently do not have sufficient %(type)s capacity in the Availability Zone "
        "you requested (%(zone)s). Our system will be working on provisioning additional "
        "capacity. You can currently get %(type)s capacity by not specifying an "
        "Availability Zone in your request or choosing %(zone)s.",
    "MaxSpotInstanceCountExceeded":
        "Max spot instance count exceeded",
    "Unsupported":
        "The requested configuration is currently not supported. Please check the "
        "documentation for supported configurations.",
}


def region_of(headers):
    m = re.search(r"Credential=[^/]+/\d{8}/([^/]+)/", headers.get("Authorization", ""))
    return m.group(1) if m else ""


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def rule(self, region):
        try:
            with open(self.server.config) as f:
                return json.load(f).get(region)
        except (OSError, ValueError):
            return None

    def note(self, line):
        if self.server.log_times:
            line += " t=%.6f" % time.time()
        with self.server.lock, open(self.server.log, "a") as f:
            f.write(line + "\n")

    def send(self, status, headers, body):
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def upstream(self, body):
        u = urllib.parse.urlsplit(self.server.upstream)
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() != "content-length"}
        hdrs["Content-Length"] = str(len(body))
        c.request(self.command, self.path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, r.getheaders(), data

    def do_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        form = urllib.parse.parse_qs(body.decode("latin-1")) if self.command == "POST" else {}
        action = form.get("Action", [""])[0]
        region = region_of(self.headers)
        rule = self.rule(region) if action in ("CreateFleet", "DescribeFleets") else None
        if action == "CreateFleet":
            if rule is None:
                self.note("%s pass" % region)
            elif rule.get("when") == "now":
                self.note("%s now %s" % (region, rule["code"]))
                msg = MESSAGES.get(rule["code"], rule["code"]) % {
                    "type": rule.get("type", ""), "zone": rule.get("zone", "")}
                doc = ('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>'
                       '<Code>%s</Code><Message>%s</Message></Error></Errors>'
                       '<RequestID>%s</RequestID></Response>' % (rule["code"], msg, uuid.uuid4()))
                self.send(400, [("Content-Type", "text/xml;charset=UTF-8")], doc.encode())
                return
            else:
                self.note("%s later %s" % (region, rule["code"]))
                form["TargetCapacitySpecification.TotalTargetCapacity"] = ["0"]
                body = urllib.parse.urlencode(form, doseq=True).encode()
        status, headers, data = self.upstream(body)
        if action == "DescribeFleets" and rule is not None and rule.get("when") == "later":
            data = self.with_errors(data, rule)
            if self.server.log_times:
                self.note("%s errors %s" % (region, rule["code"]))
        self.send(status, headers, data)

    def with_errors(self, data, rule):
        msg = MESSAGES.get(rule["code"], rule["code"]) % {
            "type": rule.get("type", ""), "zone": rule.get("zone", "")}
        err = ("<errorSet><item><launchTemplateAndOverrides><launchTemplateSpecification>"
               "<version>$Latest</version></launchTemplateSpecification><overrides>"
               "<instanceType>%s</instanceType><availabilityZone>%s</availabilityZone>"
               "<priority>1.0</priority></overrides></launchTemplateAndOverrides>"
               "<lifecycle>spot</lifecycle><errorCode>%s</errorCode>"
               "<errorMessage>%s</errorMessage></item></errorSet>"
               % (rule.get("type", ""), rule.get("zone", ""), rule["code"], msg))
        text = data.decode()
        # moto's item may carry an empty errorSet of its own: ours replaces it
        text = re.sub(r"<errorSet\s*/>|<errorSet>\s*</errorSet>", "", text)
        text = text.replace("<fleetId>", err + "<fleetId>")
        return text.encode()

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--log-times", action="store_true")
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    srv.daemon_threads = True
    srv.upstream, srv.config, srv.log = a.upstream, a.config, a.log
    srv.log_times = a.log_times
    srv.lock = threading.Lock()
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
