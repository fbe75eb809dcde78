#!/usr/bin/env python3
# ec2emu.py: moto's server (moto 5.2.1, the machine image's Python) on
# 127.0.0.1 at a port the kernel chooses, written to --port-file once it
# listens, for tests/t-ec2.c, tests/t54-up-aws.sh and the loop of
# tests/t18-loop-aws.sh (EC2, SSM and S3 on the one port). Runs until
# killed.
#
# What it adds to moto, which lacks it (a 500 in 5.2.1): ModifyFleet, a
# fleet's total target changed, instances launched up to it or the newest
# ones over it terminated, as EC2 does with the excess policy
# "termination". What moto does not do, so neither the test nor this shim
# pretends it does: a fleet of type maintain replaces no interrupted
# instance (moto has no reconciliation loop; the hook /emu/preempt below
# replaces the one it interrupts), no capacity error is ever raised, and
# its placement ignores the overrides' zones.
#
# And what it mends: moto 5.2.1 deletes a fleet with nothing to terminate
# (target 0, no live instance) by asking TerminateInstances for no ids,
# which fails the DeleteFleets with InvalidParameterCombination "No
# instances specified"; EC2 deletes it.
#
# --ssm-param NAME=VALUE (repeatable) serves an SSM parameter under AWS's
# reserved /aws/ names, as AWS publishes its AMIs' ids there: moto's
# PutParameter refuses those names and moto 5.2.1 carries only the Amazon
# Linux and ECS ones, not the Deep Learning AMI's.
#
# --spot-price TYPE,ZONE,PRICE,TIME (repeatable) is a change of the spot
# price history, which DescribeSpotPriceHistory answers as EC2's API
# reference says: newest first, the filters (InstanceType.N,
# ProductDescription.N, Filter availability-zone, instance-type,
# product-description) applied, the changes between StartTime and EndTime
# (default: now) and the last one before StartTime, "the effective price
# as of the start time"; a history no --spot-price gave is empty. moto
# 5.2.1 answers one price of 0.00001 stamped 2006-01-02 for every type it
# offers, whatever the times asked: no test could tell a price at launch
# from it.
#
# Instances as processes (not EC2's), for tests/t18-loop-aws.sh: with
# --on-instance CMD each instance moto launches runs `CMD HOST FILE`
# (through sh; HOST the first label of its private DNS name, as the VM's
# host name, "ip-10-0-0-5"; FILE its user-data decoded, under --vm-dir)
# in a session of its own; an instance terminated, whichever way
# (TerminateInstances, ModifyFleet scaling in, DeleteFleets), is shut down:
# SIGTERM to that process, its process group killed if still there after
# --grace seconds. The log (--log) says "instance ID: booted, pid P",
# "...: shutdown", "...: powered off after S s", "...: exited CODE". The
# hooks answer on their own port (--hook-port-file), POST
# /emu/preempt?id=ID: the instance interrupted and, its fleet being of
# type maintain, replaced at once (what moto does not do: EC2's fleet
# launches another toward its target); GET /emu/state: {"fleets",
# "templates", "instances"} (ids of fleets not deleted, names of launch
# templates, ids of instances not terminated).
#
# With --log, each request moto answers is a line too, "POST
# /?Action=NAME STATUS" (EC2's Query API: every call a POST, a read named
# Describe* or Get*), for bench/loop.sh's count of requests per decision.
#
# Exit 3 when moto cannot be imported (the test skips or fails on it).
import argparse
import base64
import json
import os
import re
import sys
import threading

try:
    from moto.core.responses import ActionResult
    from moto.ec2.responses.fleets import Fleets
    from moto.ec2.models.fleets import Fleet
    from moto.ec2.responses.spot_instances import SpotInstances
    from moto.server import ThreadedMotoServer
except ImportError as e:
    print("ec2emu: moto is not installed in this Python (%s)" % e, file=sys.stderr)
    sys.exit(3)


def modify_fleet(self):
    fleet_id = self._get_param("FleetId")
    spec = self._get_param("TargetCapacitySpecification", {})
    fleet = self.ec2_backend.get_fleet(fleet_id)
    if fleet is None:
        from moto.ec2.exceptions import EC2ClientError
        raise EC2ClientError("InvalidFleetId.NotFound",
                             "The fleet ID '%s' does not exist" % fleet_id)
    target = int(spec.get("TotalTargetCapacity", fleet.target_capacity))
    fleet.target_capacity = target
    fleet.target_capacity_specification["TotalTargetCapacity"] = target
    if target > fleet.fulfilled_capacity:
        fleet.create_spot_requests(target - fleet.fulfilled_capacity)
    elif target < fleet.fulfilled_capacity:
        fleet.terminate_instances()
        fleet.fulfilled_capacity = float(target)
    return ActionResult({"Return": True})


Fleets.modify_fleet = modify_fleet
moto_fleet_terminate = Fleet.terminate_instances


def fleet_terminate(self):
    def live(req):
        inst = req.instance if hasattr(req, "instance") else req["instance"]
        return inst.state != "terminated"
    n = sum(1 for r in self.spot_requests + self.on_demand_instances if live(r))
    if n > self.target_capacity:
        moto_fleet_terminate(self)


Fleet.terminate_instances = fleet_terminate

SPOT_PRICES = []	# (type, zone, price string, epoch seconds), from --spot-price

# ---- instances as processes (--on-instance: tests/vmproc.py) ----
VMS = {"vmp": None, "log": None}
VMS_LOCK = threading.RLock()


def vm_log(line):
    if VMS["log"] is not None:
        with VMS_LOCK:
            VMS["log"].write(line + "\n")
            VMS["log"].flush()


def vm_boot(inst):
    ud = inst.user_data
    if isinstance(ud, list):
        ud = ud[0] if ud else None
    if ud is not None and not isinstance(ud, (str, bytes)):
        ud = ud.as_bytes()	# moto's Base64EncodedString
    VMS["vmp"].boot(inst.id, inst.private_dns_name.split(".")[0],
                    base64.b64decode(ud) if ud else b"")


def vm_shutdown(inst_id):
    VMS["vmp"].shutdown(inst_id)


def hook_vms():
    from moto.ec2.models.instances import Instance, InstanceBackend
    run = InstanceBackend.run_instances

    def run_instances(self, *a, **kw):
        r = run(self, *a, **kw)
        for inst in r.instances:
            vm_boot(inst)
        return r
    InstanceBackend.run_instances = run_instances
    term = Instance.terminate

    def terminate(self):
        if self._state.name != "terminated":
            vm_shutdown(self.id)
        return term(self)
    Instance.terminate = terminate


def backend(region):
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends
    return ec2_backends[DEFAULT_ACCOUNT_ID][region]


def serve_hooks(port_file, region):
    import http.server

    class Hooks(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, status, obj):
            body = (json.dumps(obj) + "\n").encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path != "/emu/state":
                return self.reply(404, {"error": "no such hook"})
            b = backend(region)
            with VMS_LOCK:
                fleets = sorted(f.id for f in b.fleets.values() if not f.state.startswith("deleted"))
                tmpls = sorted(t.name for t in b.launch_templates.values())
                insts = sorted(i.id for r in b.reservations.values() for i in r.instances
                               if i.state != "terminated")
            return self.reply(200, {"fleets": fleets, "templates": tmpls, "instances": insts})

        def do_POST(self):
            import urllib.parse
            u = urllib.parse.urlsplit(self.path)
            q = dict(urllib.parse.parse_qsl(u.query))
            if u.path != "/emu/preempt":
                return self.reply(404, {"error": "no such hook"})
            b = backend(region)
            with VMS_LOCK:
                inst = b.get_instance(q["id"])
                fid = inst._fleet_id or inst._spot_fleet_id
                fleet = b.get_fleet(fid) if fid else None
                b.terminate_instances([q["id"]])
                # a maintain fleet launches another toward its target
                # (counted by its live instances: moto lowers
                # fulfilled_capacity only for a launch spec it matches)
                if fleet is not None and fleet.fleet_type == "maintain":
                    live = sum(1 for r in fleet.spot_requests if r.instance.state != "terminated")
                    live += sum(1 for r in fleet.on_demand_instances
                                if r["instance"].state != "terminated")
                    fleet.fulfilled_capacity = float(live)
                    if live < fleet.target_capacity:
                        fleet.create_spot_requests(fleet.target_capacity - live)
            return self.reply(200, {"preempted": q["id"]})

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hooks)
    srv.daemon_threads = True
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(port_file + ".tmp", port_file)
    threading.Thread(target=srv.serve_forever, daemon=True).start()


def iso_epoch(s):
    import datetime
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def spot_price_history(self):
    import time
    q = self.querystring

    def many(prefix):
        return [v[0] for k, v in sorted(q.items()) if re.fullmatch(prefix + r"\.\d+", k)]
    types, products = many("InstanceType"), many("ProductDescription")
    filters = {}
    for k, v in q.items():
        m = re.fullmatch(r"Filter\.(\d+)\.Name", k)
        if m:
            filters[v[0]] = many(r"Filter\.%s\.Value" % m.group(1))
    end = iso_epoch(q["EndTime"][0]) if "EndTime" in q else time.time()
    start = iso_epoch(q["StartTime"][0]) if "StartTime" in q else end
    rows = [r for r in SPOT_PRICES
            if (not types or r[0] in types) and (not products or "Linux/UNIX" in products)
            and r[0] in filters.get("instance-type", [r[0]])
            and r[1] in filters.get("availability-zone", [r[1]])
            and "Linux/UNIX" in filters.get("product-description", ["Linux/UNIX"])]
    out = []
    for t, z in sorted({(r[0], r[1]) for r in rows}):
        mine = sorted((r for r in rows if (r[0], r[1]) == (t, z)), key=lambda r: -r[3])
        out += [r for r in mine if start <= r[3] <= end]
        before = [r for r in mine if r[3] < start]
        if before:
            out.append(before[0])
    out.sort(key=lambda r: -r[3])
    return ActionResult({"SpotPriceHistory": [
        {"InstanceType": r[0], "ProductDescription": "Linux/UNIX", "SpotPrice": r[2],
         "AvailabilityZone": r[1],
         "Timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(r[3]))}
        for r in out]})


SpotInstances.describe_spot_price_history = spot_price_history


def log_requests():
    """Each call moto answers, a line of --log: "POST /?Action=NAME STATUS"."""
    from moto.core.responses import BaseResponse
    answer = BaseResponse.call_action

    def call_action(self):
        r = answer(self)
        status = r[0] if isinstance(r, tuple) else 200
        vm_log("%s /?Action=%s %s" % (self.method, self._get_action(), status))
        return r
    BaseResponse.call_action = call_action


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--ssm-param", action="append", default=[])
    ap.add_argument("--region", default="us-east-1")
    ap.add_argument("--spot-price", action="append", default=[])
    ap.add_argument("--on-instance")
    ap.add_argument("--grace", type=float, default=30.0)
    ap.add_argument("--vm-dir")
    ap.add_argument("--log")
    ap.add_argument("--hook-port-file")
    a = ap.parse_args()
    VMS["log"] = open(a.log, "a") if a.log else None
    if a.log:
        log_requests()
    if a.on_instance:
        from vmproc import VMs
        VMS["vmp"] = VMs(a.on_instance, a.grace, a.vm_dir, vm_log)
        hook_vms()
    if a.hook_port_file:
        serve_hooks(a.hook_port_file, a.region)
    for sp in a.spot_price:
        t, z, price, when = sp.split(",")
        SPOT_PRICES.append((t, z, price, iso_epoch(when)))
    if a.ssm_param:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.ssm.models import Parameter, ssm_backends
        params = ssm_backends[DEFAULT_ACCOUNT_ID][a.region]._parameters
        for nv in a.ssm_param:
            name, value = nv.split("=", 1)
            params[name].append(Parameter(
                account_id=DEFAULT_ACCOUNT_ID, name=name, value=value,
                parameter_type="String", description=None, allowed_pattern=None,
                keyid=None, last_modified_date=0, version=1, data_type="text"))
    import logging
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    srv = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    srv.start()
    port = srv.get_host_and_port()[1]
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % port)
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    srv._thread.join()


if __name__ == "__main__":
    main()
