"""Small SVG charts drawn by the server: stacked bars and lines, no script, no style attribute
(colours come from the stylesheet's classes, so they follow light and dark).

Each chart says what it shows in its aria-label and each mark carries a <title> (the browser
shows it on hover); the pages put the same numbers in a table next to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.web.html import Html, el, esc

WIDTH = 640
HEIGHT = 200
# Room for the axis labels: left (values), bottom (categories), top (legend).
LEFT, BOTTOM, TOP = 64, 22, 22
# Series colours: classes s0..s5 in the stylesheet.
SERIES_CLASSES = 6
# The width of a legend character at the ticks' 11px (a generous average, so labels never meet).
LEGEND_CHAR = 6.5


def _scale(top: float) -> float:
    """A round maximum for the axis, at or above `top`."""
    if top <= 0:
        return 1.0
    step = 10 ** (len(str(int(top))) - 1)
    for mult in (1, 2, 2.5, 5, 10):
        if top <= mult * step:
            return float(mult * step)
    return float(10 * step)


def _frame(label: str, top: float, unit: str, series: Sequence[str], body: list[Html]) -> Html:
    plot_h = HEIGHT - TOP - BOTTOM
    axis = [
        el("line", x1=LEFT, y1=TOP + plot_h, x2=WIDTH, y2=TOP + plot_h, class_="axis"),
        el("text", f"{top:g}{unit}", x=LEFT - 4, y=TOP + 10, class_="tick", text_anchor="end"),
        el("text", f"0{unit}", x=LEFT - 4, y=TOP + plot_h, class_="tick", text_anchor="end"),
    ]
    legend: list[Html] = []
    x = float(LEFT)
    for i, name in enumerate(series):
        legend.append(
            el(
                "g",
                el("rect", x=f"{x:.0f}", y=4, width=10, height=10, class_=f"s{i % SERIES_CLASSES}"),
                el("text", name, x=f"{x + 14:.0f}", y=13, class_="tick"),
            )
        )
        x += 14 + LEGEND_CHAR * len(name) + 18
    return el(
        "svg",
        *axis,
        *legend,
        *body,
        viewBox=f"0 0 {WIDTH} {HEIGHT}",
        role="img",
        aria_label=label,
        class_="chart",
        xmlns="http://www.w3.org/2000/svg",
    )


def bars(
    label: str,
    points: Sequence[tuple[str, Mapping[str, float]]],
    series: Sequence[str],
    *,
    unit: str = "",
) -> Html:
    """Stacked bars, one per category (a day, a bin), one colour per series."""
    top = _scale(max((sum(v.get(s, 0.0) for s in series) for _, v in points), default=0.0))
    plot_w, plot_h = WIDTH - LEFT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(1, len(points))
    width = max(2.0, slot * 0.7)
    body: list[Html] = []
    for i, (category, values) in enumerate(points):
        x = LEFT + i * slot + (slot - width) / 2
        base = 0.0
        for j, name in enumerate(series):
            value = values.get(name, 0.0)
            if value <= 0:
                continue
            h = value / top * plot_h
            y = TOP + plot_h - (base + h)
            body.append(
                el(
                    "rect",
                    el("title", f"{category} · {name}: {value:g}{unit}"),
                    x=f"{x:.1f}",
                    y=f"{y:.1f}",
                    width=f"{width:.1f}",
                    height=f"{h:.1f}",
                    class_=f"s{j % SERIES_CLASSES}",
                )
            )
            base += h
        if len(points) <= 16 or i % max(1, len(points) // 8) == 0:
            body.append(
                el(
                    "text",
                    category,
                    x=f"{x + width / 2:.1f}",
                    y=HEIGHT - 6,
                    class_="tick",
                    text_anchor="middle",
                )
            )
    return _frame(label, top, unit, series, body)


def lines(
    label: str,
    points: Sequence[tuple[str, Mapping[str, float]]],
    series: Sequence[str],
    *,
    unit: str = "",
) -> Html:
    """One line per series over the categories; a missing value breaks nothing, it is skipped."""
    top = _scale(max((v for _, vals in points for v in vals.values()), default=0.0))
    plot_w, plot_h = WIDTH - LEFT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(1, len(points))
    body: list[Html] = []
    for j, name in enumerate(series):
        marks = [
            (LEFT + i * slot + slot / 2, TOP + plot_h - vals[name] / top * plot_h, c, vals[name])
            for i, (c, vals) in enumerate(points)
            if name in vals
        ]
        if len(marks) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in marks)
            body.append(el("polyline", points=path, class_=f"line l{j % SERIES_CLASSES}"))
        body.extend(
            el(
                "circle",
                el("title", f"{c} · {name}: {v:,.0f}{unit}"),
                cx=f"{x:.1f}",
                cy=f"{y:.1f}",
                r=3,
                class_=f"s{j % SERIES_CLASSES}",
            )
            for x, y, c, v in marks
        )
    for i, (category, _) in enumerate(points):
        if len(points) <= 16 or i % max(1, len(points) // 8) == 0:
            body.append(
                el(
                    "text",
                    category,
                    x=f"{LEFT + i * slot + slot / 2:.1f}",
                    y=HEIGHT - 6,
                    class_="tick",
                    text_anchor="middle",
                )
            )
    return _frame(label, top, unit, series, body)


def figure(chart: Html, caption: str) -> Html:
    return el("figure", chart, el("figcaption", esc(caption)))
