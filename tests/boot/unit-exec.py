#!/usr/bin/python3
"""unit-exec.py: the boot test's stand-in for systemd, which is not PID 1
in a chroot: start a service unit's ExecStart= inside a root directory the
way systemd would start it there (tests/boot/cloud-init-boot.sh).

    unit-exec.py ROOT UNIT [--print]

It reads [Service] from ROOT/UNIT: User= (root only), EnvironmentFile=
(a leading '-': may be missing), Environment=, StateDirectory= (made under
/var/lib), WorkingDirectory=, and ExecStart=, whose command line it splits as
systemd does for the forms `spotrun cloud-init` writes: words separated by
spaces, each bare or in double quotes, \\\\ and \\" escapes, %% for % and $$
for $; any other specifier, variable or quote is refused rather than
guessed. With --print it prints the argument vector (one per line) and the
directory and stops; else it chroots to ROOT, changes to the working
directory and executes the command with systemd's environment of a system
service (PATH, LANG, HOME, USER, LOGNAME, SHELL, then the files' and
Environment='s variables).
"""
import os
import sys


def fail(msg):
    sys.stderr.write("unit-exec.py: %s\n" % msg)
    sys.exit(2)


def split_exec(line):
    if "%" in line.replace("%%", ""):
        fail("ExecStart has a specifier other than %%: " + line)
    line = line.replace("%%", "%")
    words, cur, i, quoted, in_word = [], [], 0, False, False
    while i < len(line):
        c = line[i]
        if c == "\\":
            if i + 1 >= len(line) or line[i + 1] not in '\\"':
                fail("ExecStart has an escape other than \\\\ and \\\": " + line)
            cur.append(line[i + 1])
            i += 2
            in_word = True
            continue
        if c == "$":
            if line[i + 1:i + 2] != "$":
                fail("ExecStart has a variable, which this stand-in does not expand: " + line)
            cur.append("$")
            i += 2
            in_word = True
            continue
        if c == '"':
            quoted = not quoted
            in_word = True
        elif c == "'":
            fail("ExecStart has a single quote, which this stand-in does not read: " + line)
        elif c in " \t" and not quoted:
            if in_word:
                words.append("".join(cur))
            cur, in_word = [], False
        else:
            cur.append(c)
            in_word = True
        i += 1
    if quoted:
        fail("ExecStart has an unclosed quote: " + line)
    if in_word:
        words.append("".join(cur))
    return words


def read_env_file(path):
    env = {}
    for raw in open(path):
        s = raw.strip()
        if not s or s[0] in "#;":
            continue
        name, eq, value = s.partition("=")
        if not eq:
            fail("%s: not NAME=VALUE: %s" % (path, s))
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        env[name.strip()] = value
    return env


def main():
    if len(sys.argv) not in (3, 4):
        fail("usage: unit-exec.py ROOT UNIT [--print]")
    root, unit = sys.argv[1], sys.argv[2]
    keys, section = {}, None
    for raw in open(os.path.join(root, unit.lstrip("/"))):
        s = raw.strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("["):
            section = s
            continue
        if section == "[Service]":
            name, _, value = s.partition("=")
            keys.setdefault(name, []).append(value)
    if keys.get("User", ["root"]) != ["root"]:
        fail("User= other than root: " + str(keys["User"]))
    if len(keys.get("ExecStart", [])) != 1:
        fail("not one ExecStart: " + str(keys.get("ExecStart")))
    argv = split_exec(keys["ExecStart"][0])
    wd = keys.get("WorkingDirectory", ["/"])[-1]
    if len(sys.argv) == 4:
        print("\n".join(argv))
        print("cwd " + wd)
        return
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "LANG": "C.UTF-8", "HOME": "/root", "USER": "root", "LOGNAME": "root",
           "SHELL": "/bin/sh"}
    for f in keys.get("EnvironmentFile", []):
        optional = f.startswith("-")
        path = os.path.join(root, f.lstrip("-").lstrip("/"))
        if os.path.exists(path):
            env.update(read_env_file(path))
        elif not optional:
            fail("EnvironmentFile %s is missing" % f)
    for e in keys.get("Environment", []):
        for word in split_exec(e):
            name, _, value = word.partition("=")
            env[name] = value
    for d in keys.get("StateDirectory", []):
        for name in d.split():
            os.makedirs(os.path.join(root, "var/lib", name), mode=0o755, exist_ok=True)
    os.chroot(root)
    os.chdir(wd)
    os.execve(argv[0], argv, env)


main()
