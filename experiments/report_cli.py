"""report_cli — the command line the experiments' report scripts share (roma/report.py,
dynamoml/report.py, rrl/findings.py): `SCRIPT DB` prints the report (markdown tables);
`SCRIPT DB --readme README.md` writes it into the README between the script's markers
(`<!-- NAME begin -->` ... `<!-- NAME end -->`, NAME the script's file name), so a README's
tables are always what the script printed from a fresh run. `connect` and `rows` are how they
read a results database: read-only, each query read whole, so reading while a sweep writes
neither fails the reader nor holds a lock that fails a point; `seeds_line` says which seeds
were read."""
import os
import sqlite3
import sys
import urllib.parse

BUSY_S = 600   # as SIM_STORE_BUSY_MS (results/sim_store.h): wait out a writer's commit


def connect(db):
    """The results database DB, opened read-only (a reader never takes a write lock)."""
    if not os.path.isfile(db):
        sys.exit("%s: no such results database" % db)
    return sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(db)),
                           uri=True, timeout=BUSY_S)


def rows(con, sql, *args):
    """Every row of one query, read at once: the statement's read lock ends with it, however
    long the caller then works on the rows (a cursor iterated slowly would keep a writer's
    commit waiting)."""
    return con.execute(sql, args).fetchall()


def seeds_line(seeds, runs):
    """'Read N runs, seeds 1, 2, 3.' for the report's head."""
    s = sorted(set(x for x in seeds if x is not None))
    return "Read %d runs, seeds %s." % (runs, ", ".join(str(x) for x in s) if s else "none")


def main(report, argv=None):
    argv = sys.argv if argv is None else argv
    name = os.path.basename(argv[0])
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--readme"):
        sys.exit("usage: %s DB [--readme README.md]" % name)
    text = report(argv[1])
    if len(argv) == 2:
        print(text)
        return
    path, begin, end = argv[3], "<!-- %s begin -->" % name, "<!-- %s end -->" % name
    doc = open(path).read()
    if begin not in doc or end not in doc:
        sys.exit("%s: %s has no %s ... %s markers" % (name, path, begin, end))
    head, rest = doc.split(begin, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text + "\n" + end + rest.split(end, 1)[1])
