#!/usr/bin/env python3
# The transcripts of a documentation section, to replay (tests/bats/ops_trial.bats):
#   doc_walk.py FILE SECTION DIR
# In FILE, from the heading "## SECTION" to the next "## " heading: the first indented
# JSON block goes to DIR/config.json; every indented "$ keyrouter ..." line and the indented
# lines after it (blank lines included, up to the next command or text) go to DIR/NN.cmd (the command, without "$ " and
# without a trailing "# comment", which goes to DIR/NN.note) and DIR/NN.out (the output).
import os, re, sys

def main():
    path, section, out = sys.argv[1:4]
    lines = open(path).read().split("\n")
    start = lines.index("## " + section)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    body = lines[start + 1:end]
    i, n, config = 0, 0, None
    while i < len(body):
        line = body[i]
        if config is None and line == "    {":
            j = body.index("    }", i)
            config = "\n".join(l[4:] for l in body[i:j + 1]) + "\n"
            open(os.path.join(out, "config.json"), "w").write(config)
            i = j + 1
            continue
        if line.startswith("    $ keyrouter "):
            cmd = line[6:]
            m = re.match(r"^(.*?)\s+#\s*(.*)$", cmd)
            note = ""
            if m:
                cmd, note = m.group(1), m.group(2)
            expect = []
            i += 1
            while i < len(body):
                if body[i].startswith("    ") and not body[i].startswith("    $ "):
                    expect.append(body[i][4:])
                elif body[i] == "" and i + 1 < len(body) and \
                        body[i + 1].startswith("    ") and not body[i + 1].startswith("    $ "):
                    expect.append("")	# a blank line inside the output
                else:
                    break
                i += 1
            n += 1
            base = os.path.join(out, "%02d" % n)
            open(base + ".cmd", "w").write(cmd + "\n")
            open(base + ".note", "w").write(note + "\n")
            open(base + ".out", "w").write("".join(l + "\n" for l in expect))
            continue
        i += 1
    print(n)

main()
