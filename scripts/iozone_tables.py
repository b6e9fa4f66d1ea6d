"""iozone's -R text (and fsbench's `report --format iozone`), read by scripts/bench-vs-iozone and
scripts/ab-vs-iozone."""


def tables(path):
    """-R text -> {title: {(file_kib, rec_kib): kib_per_sec}}, skipped (0) cells left out."""
    res, lines, i = {}, open(path).read().splitlines(), 0
    while i < len(lines):
        t = lines[i].strip()
        if t.startswith('"') and t.endswith('report"'):
            recs = [int(x.strip('"')) for x in lines[i + 1].split()]
            cells, i = {}, i + 2
            while i < len(lines) and lines[i].strip().startswith('"'):
                parts = lines[i].split()
                f = int(parts[0].strip('"'))
                for r, v in zip(recs, parts[1:]):
                    if float(v) > 0:
                        cells[(f, r)] = float(v)
                i += 1
            res[t.strip('"')] = cells
        else:
            i += 1
    return res


def resolution(path):
    """iozone's "Time Resolution = X seconds" line, in seconds (0 when absent)."""
    for line in open(path):
        if "Time Resolution" in line:
            return float(line.split("=")[1].split()[0])
    return 0.0
