"""Minimal SVG charts for the bench report, standard library only (no matplotlib on the lab machine).

Two chart kinds, both returning an SVG document as a string:
- cdf(title, xlabel, series): empirical CDFs of several samples (a latency distribution);
- lines(title, xlabel, ylabel, series): y over x, one polyline per series (buffer level over time).
`series` is a list of (label, values) or (label, [(x, y), ...]). Empty series are skipped; a chart with
no data says so instead of drawing axes.
"""

import math
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 720, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 180, 36, 48
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]


def _nice_ticks(low, high, count=6):
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), default=raw)
    start = (low // step) * step
    ticks, value = [], start
    while value <= high + step * 0.001:
        if value >= low - step * 0.001:
            ticks.append(round(value, 10))
        value += step
    return ticks


def _frame(title, xlabel, ylabel, x_range, y_range):
    x0, x1 = x_range
    y0, y1 = y_range
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x):
        return LEFT + (x - x0) / (x1 - x0) * plot_w

    def sy(y):
        return TOP + plot_h - (y - y0) / (y1 - y0) * plot_h
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
             'font-family="sans-serif" font-size="11">',
             f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
             f'<text x="{WIDTH / 2 - RIGHT / 2}" y="20" text-anchor="middle" font-size="13">{escape(title)}</text>']
    for x in _nice_ticks(x0, x1):
        parts.append(f'<line x1="{sx(x):.1f}" y1="{TOP}" x2="{sx(x):.1f}" y2="{TOP + plot_h}" stroke="#eee"/>')
        parts.append(f'<text x="{sx(x):.1f}" y="{TOP + plot_h + 14}" text-anchor="middle">{x:g}</text>')
    for y in _nice_ticks(y0, y1):
        parts.append(f'<line x1="{LEFT}" y1="{sy(y):.1f}" x2="{LEFT + plot_w}" y2="{sy(y):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
    parts.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#444"/>')
    parts.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 10}" text-anchor="middle">{escape(xlabel)}</text>')
    parts.append(f'<text x="14" y="{TOP + plot_h / 2}" text-anchor="middle" transform="rotate(-90 14 {TOP + plot_h / 2})">'
                 f'{escape(ylabel)}</text>')
    return parts, sx, sy


def _legend(parts, labels):
    for index, label in enumerate(labels):
        y = TOP + 8 + index * 16
        colour = COLOURS[index % len(COLOURS)]
        parts.append(f'<line x1="{WIDTH - RIGHT + 12}" y1="{y}" x2="{WIDTH - RIGHT + 30}" y2="{y}" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{WIDTH - RIGHT + 34}" y="{y + 4}">{escape(label)}</text>')


def _empty(title):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="80" font-family="sans-serif">'
            f'<text x="10" y="30">{escape(title)}: no data</text></svg>\n')


def cdf(title, xlabel, series):
    series = [(label, sorted(v for v in values if v is not None)) for label, values in series]
    series = [(label, values) for label, values in series if values]
    if not series:
        return _empty(title)
    low = min(values[0] for _, values in series)
    high = max(values[-1] for _, values in series)
    pad = (high - low) * 0.05 or 0.5
    parts, sx, sy = _frame(title, xlabel, "fraction of samples ≤ x", (max(0, low - pad), high + pad), (0, 1))
    for index, (_, values) in enumerate(series):
        n = len(values)
        points = []
        previous = 0.0
        for rank, value in enumerate(values, 1):
            points.append(f"{sx(value):.1f},{sy(previous):.1f}")
            previous = rank / n
            points.append(f"{sx(value):.1f},{sy(previous):.1f}")
        parts.append(f'<polyline fill="none" stroke="{COLOURS[index % len(COLOURS)]}" stroke-width="1.5" points="{" ".join(points)}"/>')
    _legend(parts, [f"{label} (n={len(values)})" for label, values in series])
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def lines(title, xlabel, ylabel, series):
    series = [(label, [(x, y) for x, y in points if x is not None and y is not None]) for label, points in series]
    series = [(label, points) for label, points in series if points]
    if not series:
        return _empty(title)
    xs = [x for _, points in series for x, _ in points]
    ys = [y for _, points in series for _, y in points]
    y_low, y_high = min(0, min(ys)), max(ys)
    parts, sx, sy = _frame(title, xlabel, ylabel, (min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1),
                           (y_low, y_high * 1.1 if y_high > y_low else y_low + 1))
    for index, (_, points) in enumerate(series):
        coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
        parts.append(f'<polyline fill="none" stroke="{COLOURS[index % len(COLOURS)]}" stroke-width="1.2" points="{coords}"/>')
    _legend(parts, [label for label, _ in series])
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
