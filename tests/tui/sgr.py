#!/usr/bin/env python3
"""tests/tui/sgr.py: what a terminal shows, cell by cell, from `tmux capture-pane -e -p`
(text with SGR escapes). The explorer's colour tests ask it about cells:

    sgr.py FILE ROW COL        -> "CH FG BG ATTRS" for the cell (0-based), e.g. "│ default default b"
    sgr.py FILE find ROW TEXT  -> the column where TEXT starts on ROW, or -1
    sgr.py FILE count FG BG    -> how many cells have that foreground and background
    sgr.py FILE unseen         -> cells a dark or a light theme would hide: a visible character
                                  in near-black (16, 232-240) or near-white (15, 231, 250-255)
                                  ink on the terminal's own paper, or white paper (231, 255)

FG and BG are xterm-256 numbers or "default"; ATTRS are b(old) d(im) u(nderline) r(everse),
or "-". Only what tmux writes is parsed: SGR 0 1 2 4 7 22 24 27 30-37 38;5;N 39 40-47 48;5;N 49
90-97 100-107."""
import re
import sys

ESC = re.compile(r"\x1b\[([0-9;:]*)m")


def parse(path):
    rows = []
    st = {"fg": "default", "bg": "default", "b": False, "d": False, "u": False, "r": False}
    for line in open(path, encoding="utf-8", errors="replace").read().split("\n"):
        row, pos = [], 0
        for m in ESC.finditer(line):
            for ch in line[pos:m.start()]:
                row.append((ch, dict(st)))
            pos = m.end()
            codes = [c for c in m.group(1).replace(":", ";").split(";")] or ["0"]
            i = 0
            while i < len(codes):
                c = int(codes[i] or 0)
                if c == 0:
                    st.update(fg="default", bg="default", b=False, d=False, u=False, r=False)
                elif c == 1: st["b"] = True
                elif c == 2: st["d"] = True
                elif c == 4: st["u"] = True
                elif c == 7: st["r"] = True
                elif c == 22: st["b"] = st["d"] = False
                elif c == 24: st["u"] = False
                elif c == 27: st["r"] = False
                elif 30 <= c <= 37: st["fg"] = str(c - 30)
                elif 90 <= c <= 97: st["fg"] = str(c - 90 + 8)
                elif 40 <= c <= 47: st["bg"] = str(c - 40)
                elif 100 <= c <= 107: st["bg"] = str(c - 100 + 8)
                elif c == 39: st["fg"] = "default"
                elif c == 49: st["bg"] = "default"
                elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == "5":
                    st["fg" if c == 38 else "bg"] = codes[i + 2]
                    i += 2
                i += 1
        for ch in line[pos:]:
            row.append((ch, dict(st)))
        rows.append(row)
    return rows


def show(cell):
    ch, st = cell
    attrs = "".join(k for k in "bdur" if st[k]) or "-"
    return "%s %s %s %s" % (ch, st["fg"], st["bg"], attrs)


def main(argv):
    rows = parse(argv[1])
    blank = (" ", {"fg": "default", "bg": "default", "b": False, "d": False, "u": False, "r": False})
    if argv[2] == "find":
        r, text = int(argv[3]), argv[4]
        line = "".join(c[0] for c in rows[r]) if r < len(rows) else ""
        print(line.find(text))
    elif argv[2] == "unseen":
        dark = {"0", "16"} | {str(i) for i in range(232, 241)}
        light = {"7", "15", "231"} | {str(i) for i in range(250, 256)}
        n = 0
        for r, row in enumerate(rows):
            for c, (ch, st) in enumerate(row):
                ink = st["bg"] if st["r"] else st["fg"]
                paper = st["fg"] if st["r"] else st["bg"]
                bad = paper in ("231", "255") or (
                    ch != " " and paper == "default" and (ink in dark or ink in light))
                if bad:
                    n += 1
                    if n <= 5:
                        print("row %d col %d: %s" % (r, c, show((ch, st))), file=sys.stderr)
        print(n)
    elif argv[2] == "count":
        print(sum(1 for row in rows for ch, st in row if st["fg"] == argv[3] and st["bg"] == argv[4]))
    else:
        r, c = int(argv[2]), int(argv[3])
        print(show(rows[r][c] if r < len(rows) and c < len(rows[r]) else blank))


if __name__ == "__main__":
    main(sys.argv)
