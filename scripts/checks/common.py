"""What the checks of scripts/checks share: the files they read, comments
told from code.  Not a check itself."""
import os
import re
import subprocess

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SRC = os.path.join(TOP, "src")


def files_under(folder, exts):
    """Every file under TOP/folder whose name ends with one of exts, by its
    path from TOP, sorted."""
    out = []
    for d, _, fs in os.walk(os.path.join(TOP, folder)):
        for f in fs:
            if f.endswith(exts):
                out.append(os.path.relpath(os.path.join(d, f), TOP))
    return sorted(out)


def read(path):
    with open(os.path.join(TOP, path), errors="replace") as fh:
        return fh.read()


def c_sources():
    """src/'s .c and .h files, by their path under src/ (as #include names them)."""
    return [os.path.relpath(f, "src") for f in files_under("src", (".c", ".h"))]


def folder_of(f):
    """The folder of src/ a file (path under src/) belongs to: its first
    component (a kind's folder belongs to kinds/); a file at the top is a
    folder of its own (mtdpp.c: the entry points; shown.h and shown.c: one)."""
    parts = f.split(os.sep)
    return parts[0] + "/" if len(parts) > 1 else os.path.splitext(f)[0]


def split_c(text):
    """C text as two texts of its length, newlines kept: the code (comments
    and the insides of string/char literals blanked) and the comments
    (everything else blanked)."""
    code, comm = [], []
    blank = lambda t: re.sub(r"[^\n]", " ", t)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i) or text.startswith("//", i):
            if text[i + 1] == "*":
                j = text.find("*/", i + 2)
                j = n if j < 0 else j + 2
            else:
                j = text.find("\n", i)
                j = n if j < 0 else j
            code.append(blank(text[i:j]))
            comm.append(text[i:j])
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            code.append(c + blank(text[i + 1:j]) + c)
            comm.append(blank(text[i:j + 1]))
            i = j + 1
        else:
            code.append(c)
            comm.append(blank(c))
            i += 1
    return "".join(code), "".join(comm)


def strip_comments(text):
    """C: comments and string/char literals blanked, newlines kept."""
    return split_c(text)[0]


def comments(path):
    """(line number, comment text) of each line of a file holding a comment:
    C comments in .c/.h, -- comments in .sql, # comments elsewhere."""
    text = read(path)
    if path.endswith((".c", ".h")):
        lines = split_c(text)[1].split("\n")
        return [(i, l) for i, l in enumerate(lines, 1) if l.strip()]
    out = []
    mark = "--" if path.endswith(".sql") else "#"
    for i, line in enumerate(text.split("\n"), 1):
        k = line.find(mark)
        if k >= 0 and not line.startswith("#!"):
            out.append((i, line[k:]))
    return out


def regress_schedule():
    """The pg_regress schedule: the Makefile's REGRESS."""
    out = subprocess.run(["make", "-s", "--no-print-directory", "-C", TOP, "-f", "Makefile",
                          "-f", "-", "print-REGRESS"],
                         input="print-%:\n\t@echo $($*)\n", capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("cannot read REGRESS from the Makefile: " + out.stderr)
    return out.stdout.split()


def report(name, problems, fine):
    """Prints the problems (exit 1) or the line saying what holds."""
    for p in problems:
        print("  " + p)
    if problems:
        print("%s: %d problem(s)" % (name, len(problems)))
        raise SystemExit(1)
    print("%s: %s" % (name, fine))
