"""report_cli — the command line the experiments' report scripts share (roma/report.py,
dynamoml/report.py, rrl/findings.py): `SCRIPT DB` prints the report (markdown tables);
`SCRIPT DB --readme README.md` writes it into the README between the script's markers
(`<!-- NAME begin -->` ... `<!-- NAME end -->`, NAME the script's file name), so a README's
tables are always what the script printed from a fresh run."""
import os
import sys


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
