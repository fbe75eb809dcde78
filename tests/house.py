#!/usr/bin/env python3
"""house.py: checks that the house stands as doc/design.md draws it ("The
house"), over the sources and over the built objects. Prints TAP.

    house.py SRCDIR BUILDDIR

1. Every `#include "x.h"` of a product file resolves (its own folder first,
   then the modules' folders) to exactly one header, in the file's own
   module or in one the file's module may use; never through "../"; outside
   store/ only store.h of the store (its one public header). cli/ (the
   command line, with cmd.h's exit codes) is the top: nothing includes it.
2. The built libraries link the same way: a symbol an object takes from
   another library is defined in a module its own module may use.
3. No loop of function calls between files: object A calling a function of
   object B and B (through any chain) calling one of A. A reference to
   data (a registry naming its entries: store.c's backend table, the
   providers' and commands' tables) is not a call and does not count.
4. No module folder holds more than a quarter of the product's lines.
5. The names of the providers and the schemes of the store live in their
   modules' tables: no file outside providers/ compares a provider's name
   or lists them, none outside store/ compares a URL's scheme or lists
   the schemes (a new provider or store backend is a file and a table
   line, doc/design.md "How to add").
6. The keys of a job's objects in the store are spelled in one place,
   common/jobkeys.c and its header: no other product file has a string
   literal holding a piece of one ("/LATEST", "manifests/", "parts/",
   "rank%d.json"...), so that a key is built and read back only there.

Each check is one TAP line; a failure lists what broke it.
"""
import glob
import os
import re
import subprocess
import sys

# Folder -> module. store/s3/ and store/azure/ are part of the store module (its
# S3 and Azure families of backends) but folders of their own for the size rule.
FOLDERS = {
    "common": "common", "compat": "common", "kernels": "kernels",
    "store": "store", "store/s3": "store", "store/azure": "store", "ckpt": "ckpt", "queue": "queue",
    "providers": "providers", "jobspec": "jobspec", "runner": "runner", "fleet": "fleet",
    "cli": "cli", "lib": "lib", "cloud": "cloud", "cloud/aws": "cloud",
    "cloud/gcp": "cloud", "cloud/azure": "cloud",
}
# What each module may include / link against, besides itself.
MAY_USE = {
    "common": set(),
    "kernels": {"common"},
    "store": {"common"},
    "ckpt": {"common", "kernels", "store"},
    "queue": {"common", "store"},
    "providers": {"common"},
    "jobspec": {"common", "kernels", "store", "ckpt", "providers"},
    "runner": {"common", "kernels", "store", "ckpt", "queue", "providers", "jobspec"},
    "cloud": {"common", "store"},
    "fleet": {"common", "kernels", "store", "ckpt", "queue", "providers", "jobspec", "runner",
              "cloud"},
    "cli": {"common", "kernels", "store", "ckpt", "queue", "providers", "jobspec", "runner",
            "cloud", "fleet"},
    "lib": {"common", "kernels", "store", "ckpt"},
}
LIBS = {
    "libcommon.a": "common", "libkernels.a": "kernels", "libstore.a": "store",
    "libckpt.a": "ckpt", "libqueue.a": "queue", "libproviders.a": "providers",
    "libjobspec.a": "jobspec", "librunner.a": "runner", "libfleet.a": "fleet",
    "libcloud.a": "cloud",
    "libcli.a": "cli",
    # libspotrun.so's own objects (libtool's PIC builds of lib/*.c); the
    # archives below it are linked into it as they are
    "lib/.libs/libspotrun_la-*.o": "lib",
}
# The store's headers other modules may include, and which (None: any):
# awsauth.h, SigV4 and the AWS credentials chain for other AWS APIs, and
# xmlwalk.h, the walk over XML replies that EC2's share with S3's, for
# cloud/ alone.
STORE_PUBLIC = {"store.h": None, "awsauth.h": {"cloud"}, "xmlwalk.h": {"cloud"}}
MAX_SHARE = 0.25
# The one place that spells a job's keys (check 5), and the pieces of them
# no other product file's string literals may hold.
JOBKEYS = {"common/jobkeys.c", "common/jobkeys.h"}
JOBKEY_PIECES = re.compile(r"/LATEST\b|/FINISHED\b|\b(manifests|packs|parts|attempts)/|rank%d\.json")

n = 0
failed = 0


def tap(ok, what, problems=()):
    global n, failed
    n += 1
    print(("ok" if ok else "not ok") + " %d - %s" % (n, what))
    for p in list(problems)[:40]:
        print("#   " + p)
    if not ok:
        failed += 1


def product_files(src):
    files = []
    for folder in FOLDERS:
        d = os.path.join(src, folder)
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h", ".cu")):
                files.append(folder + "/" + name)
    return files


def check_includes(src, files):
    where = {}
    for f in files:
        where.setdefault(os.path.basename(f), []).append(f)
    problems = []
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for f in files:
        folder = os.path.dirname(f)
        mod = FOLDERS[folder]
        with open(os.path.join(src, f), encoding="utf-8") as fp:
            for lineno, line in enumerate(fp, 1):
                m = inc.match(line)
                if not m:
                    continue
                name = m.group(1)
                at = "%s:%d: #include \"%s\"" % (f, lineno, name)
                if name == "config.h":
                    continue
                if "/" in name:
                    problems.append(at + ": a path; include by name, the build's -I says where")
                    continue
                if folder + "/" + name in files:
                    target = folder + "/" + name
                else:
                    cands = where.get(name, [])
                    if len(cands) != 1:
                        problems.append(at + ": %s" % ("no such header in the product" if not cands
                                                        else "ambiguous: " + ", ".join(cands)))
                        continue
                    target = cands[0]
                tmod = FOLDERS[os.path.dirname(target)]
                if tmod != mod and tmod not in MAY_USE[mod]:
                    problems.append(at + ": %s may not use %s (%s)" % (mod, tmod, target))
                elif tmod == "store" and mod != "store" and (name not in STORE_PUBLIC or (
                        STORE_PUBLIC[name] is not None and mod not in STORE_PUBLIC[name])):
                    problems.append(at + ": outside store/ only store.h is included (and "
                                    "awsauth.h and xmlwalk.h by cloud/) (%s)" % target)
    return problems


def nm_objects(build):
    """{object: (module, defined {sym: type}, undefined set)}"""
    objs = {}
    paths = []
    for pattern, mod in LIBS.items():
        found = sorted(glob.glob(os.path.join(build, pattern)))
        if not found:
            raise SystemExit("house.py: nothing built matches %s in %s" % (pattern, build))
        paths += [(os.path.relpath(p, build), mod) for p in found]
    for lib, mod in paths:
        out = subprocess.run(["nm", "-A", os.path.join(build, lib)], capture_output=True,
                             text=True, check=True).stdout
        # "lib.a:obj.o:ADDR T sym", or "lib.a:obj.o: U sym" when undefined
        for line in out.splitlines():
            parts = line.split()
            if len(parts) != 3:
                continue
            obj = lib if lib.endswith(".o") else lib + ":" + parts[0].split(":")[1]
            entry = objs.setdefault(obj, (mod, {}, set()))
            if parts[1] == "U":
                entry[2].add(parts[2])
            elif parts[1] in "TDBRC":
                entry[1][parts[2]] = parts[1]
    return objs


def check_links(objs):
    owner = {}
    for obj, (mod, defs, _) in objs.items():
        for s, t in defs.items():
            owner[s] = (obj, mod, t)
    problems = []
    calls = {o: set() for o in objs}
    for obj, (mod, _, undef) in objs.items():
        for s in sorted(undef):
            if s not in owner:
                continue
            tobj, tmod, t = owner[s]
            if tmod != mod and tmod not in MAY_USE[mod]:
                problems.append("%s uses %s of %s: %s may not use %s" % (obj, s, tobj, mod, tmod))
            if t == "T" and tobj != obj:
                calls[obj].add(tobj)
    return problems, calls


def loops(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(100000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_sizes(src, files):
    lines = {}
    for f in files:
        with open(os.path.join(src, f), encoding="utf-8") as fp:
            lines[os.path.dirname(f)] = lines.get(os.path.dirname(f), 0) + sum(1 for _ in fp)
    total = sum(lines.values())
    report = ["%-10s %6d lines %5.1f%%" % (d, c, 100.0 * c / total) for d, c in sorted(lines.items())]
    big = [r for d, r in zip(sorted(lines), report) if lines[d] > MAX_SHARE * total]
    return big, report


PROVIDER_NAMES = r"(aws|gcp|azure|local|signal)"
SCHEMES = r"(file|s3|gs|az)"
NAME_RULES = [
    # (modules where the names live, pattern, what it is)
    ({"providers"}, re.compile(r'str(n|case)?cmp\s*\([^;]*"' + PROVIDER_NAMES + r'"'),
     "compares a provider's name"),
    ({"providers"}, re.compile(r'"[^"]*\b(aws|gcp|azure), (aws|gcp|azure|local|signal)\b'),
     "lists the providers"),
    ({"store"}, re.compile(r'str(n|case)?cmp\s*\([^;]*"' + SCHEMES + r':'),
     "compares a URL's scheme"),
    ({"store"}, re.compile(r'"[^"]*' + SCHEMES + r'://[^"]*, *' + SCHEMES + r'://'),
     "lists the store's schemes"),
]


def check_names(src, files):
    problems = []
    for f in files:
        mod = FOLDERS[os.path.dirname(f)]
        with open(os.path.join(src, f), encoding="utf-8") as fp:
            text = fp.read()
        # comments say what they like; code and its strings are checked
        code = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
        for lineno, line in enumerate(code.splitlines(), 1):
            for home, pat, what in NAME_RULES:
                if mod not in home and pat.search(line):
                    problems.append("%s:%d: %s outside %s: %s" % (f, lineno, what,
                                    "/".join(sorted(home)), line.strip()[:100]))
    return problems


def c_strings(text):
    """(line, contents) of each string literal of C source text, comments
    and character constants skipped."""
    out, i, line, n = [], 0, 1, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif c in "\"'":
            j, start = i + 1, line
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                out.append((start, text[i + 1:j]))
            i = j + 1
        else:
            if c == "\n":
                line += 1
            i += 1
    return out


def check_jobkeys(src, files):
    problems = []
    for f in files:
        if f in JOBKEYS:
            continue
        with open(os.path.join(src, f), encoding="utf-8") as fp:
            for lineno, lit in c_strings(fp.read()):
                m = JOBKEY_PIECES.search(lit)
                if m:
                    problems.append('%s:%d: "%s": a piece of a job\'s key (%s); build it with '
                                    "common/jobkeys.h" % (f, lineno, lit, m.group(0)))
    return problems


def main():
    src, build = sys.argv[1], sys.argv[2]
    files = product_files(src)
    print("1..6")
    problems = check_includes(src, files)
    tap(not problems,
        "every include stays in its module or goes down to one it may use", problems)
    objs = nm_objects(build)
    problems, calls = check_links(objs)
    tap(not problems and len(objs) > 20,
        "every symbol a library takes from another comes from a module below it",
        problems if problems else ["only %d objects found" % len(objs)] if len(objs) <= 20 else [])
    found = loops(calls)
    tap(not found, "no loop of function calls between files",
        [" <-> ".join(c) for c in found])
    big, report = check_sizes(src, files)
    tap(not big, "no module folder holds more than a quarter of the product's lines",
        big + ["--"] + report if big else [])
    problems = check_names(src, files)
    tap(not problems, "provider names and store schemes only in their modules' tables", problems)
    problems = check_jobkeys(src, files)
    tap(not problems, "a job's keys are spelled in common/jobkeys.c only", problems)
    for r in report:
        print("# " + r)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
