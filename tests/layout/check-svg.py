#!/usr/bin/env python3
"""check-svg.py FILE [--cells N] [--label TEXT ...] [--title TEXT]

Checks a picture drawn by fly_layout_svg, fly_composed_svg or
fly_tv_layout_svg (sema/fly_layout_draw.h): FILE must be well-formed XML
whose root is an <svg> in the SVG namespace; with --cells, it must hold
exactly N <rect class="cell">; every --label must be the text of some
<text class="label">; with --title, the <title> must be exactly TEXT.
Prints "ok: N cells" and exits 0, else says what is wrong and exits 1.
Python 3 standard library only.
"""

import argparse
import sys
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"


def tag(name):
    return "{%s}%s" % (SVG_NS, name)


def has_class(element, name):
    return name in (element.get("class") or "").split()


def problems_of(root, args):
    """What is wrong with the parsed picture, as a list of sentences."""
    if root.tag != tag("svg"):
        return ["the root element is %s, not svg in the namespace %s" % (root.tag, SVG_NS)]
    found = []
    cells = [e for e in root.iter(tag("rect")) if has_class(e, "cell")]
    if args.cells is not None and len(cells) != args.cells:
        found.append("want %d cells, found %d" % (args.cells, len(cells)))
    labels = {e.text or "" for e in root.iter(tag("text")) if has_class(e, "label")}
    for label in args.label or []:
        if label not in labels:
            found.append("no label %r" % label)
    if args.title is not None:
        title = root.find(tag("title"))
        got = None if title is None else (title.text or "")
        if got != args.title:
            found.append("want the title %r, found %r" % (args.title, got))
    return found


def main(argv):
    parser = argparse.ArgumentParser(description="Check an SVG picture of a Fly layout.")
    parser.add_argument("file")
    parser.add_argument("--cells", type=int, help="the number of rect.cell elements")
    parser.add_argument("--label", action="append", metavar="TEXT",
                        help="a text.label that must appear (repeatable, or several after one flag)",
                        nargs="+")
    parser.add_argument("--title", help="the exact text of the title")
    args = parser.parse_args(argv)
    if args.label:  # flatten: --label a b --label c
        args.label = [text for group in args.label for text in group]
    try:
        root = ET.parse(args.file).getroot()
    except ET.ParseError as err:
        print("%s: not well-formed XML: %s" % (args.file, err))
        return 1
    except OSError as err:
        print("%s: cannot read: %s" % (args.file, err.strerror))
        return 1
    problems = problems_of(root, args)
    if problems:
        for problem in problems:
            print("%s: %s" % (args.file, problem))
        return 1
    cells = sum(1 for e in root.iter(tag("rect")) if has_class(e, "cell"))
    print("ok: %d cells" % cells)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
