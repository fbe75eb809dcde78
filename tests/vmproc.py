# vmproc.py: an emulated cloud's instances as processes, for the loop
# tests (t16, t17, t18): tests/gceemu.py, tests/armemu.py and
# tests/ec2emu.py each hand their --on-instance command here. An instance
# made runs `CMD HOST FILE` (through sh; HOST the VM's host name, FILE its
# user-data, written under the given folder, else $TMPDIR) in a session
# of its own, so that a test boots it as a VM (tests/jobs/vm-boot.sh); an
# instance gone is shut down as a VM is: SIGTERM to that process (systemd
# stopping the agent), its whole process group killed if still there
# after grace seconds (30: a Spot VM's notice). The log says "instance
# ID: booted, pid P", "...: shutdown", "...: powered off after S s" and
# "...: exited CODE" (or "on signal N").
import os
import signal
import subprocess
import tempfile
import threading


class VMs:
	def __init__(self, cmd, grace, folder, log):
		self.cmd, self.grace, self.folder, self.log = cmd, grace, folder, log
		self.procs = {}			# ID -> its process
		self.lock = threading.Lock()

	def boot(self, ident, host, user_data):
		"""Instance ident (as the log names it) made: its process started
		(nothing without a command)."""
		if not self.cmd:
			return
		fd, path = tempfile.mkstemp(prefix=ident.replace("/", "-") + "-", suffix=".user-data",
		    dir=self.folder)
		with os.fdopen(fd, "wb") as f:
			f.write(user_data)
		p = subprocess.Popen(["/bin/sh", "-c", "exec " + self.cmd + ' "$@"', "sh", host, path],
		    stdin=subprocess.DEVNULL, start_new_session=True)
		with self.lock:
			self.procs[ident] = p
		self.log("instance %s: booted, pid %d" % (ident, p.pid))

		def reap():
			rc = p.wait()
			self.log("instance %s: exited %s" % (ident, rc if rc >= 0 else
			    "on signal %d" % -rc))
		threading.Thread(target=reap, daemon=True).start()

	def shutdown(self, ident):
		"""Instance ident gone: its process, if any, shut down."""
		with self.lock:
			p = self.procs.pop(ident, None)
		if p is None or p.poll() is not None:
			return
		self.log("instance %s: shutdown" % ident)
		try:
			os.kill(p.pid, signal.SIGTERM)
		except OSError:
			pass

		def hard_off():
			if p.poll() is None:
				self.log("instance %s: powered off after %g s" % (ident, self.grace))
				try:
					os.killpg(p.pid, signal.SIGKILL)
				except OSError:
					pass
		t = threading.Timer(self.grace, hard_off)
		t.daemon = True
		t.start()
