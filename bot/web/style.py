"""The page's stylesheet, served at /static/style.css (the CSP allows no inline style).

Light and dark follow the browser (prefers-color-scheme); chart series use classes s0..s5.
"""

STYLESHEET = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1d2330; --muted: #5b6475;
  --line: #d9dde5; --card: #f5f7fa; --accent: #2f5fb3;
  --s0: #2f6fdb; --s1: #e0782f; --s2: #2a9d6f; --s3: #c8415a; --s4: #8a63d2; --s5: #8c8c8c; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #14171d; --fg: #e3e7ee; --muted: #9aa3b2; --line: #313744; --card: #1c2028;
    --accent: #8db4ff;
    --s0: #6b9cff; --s1: #ff9f5a; --s2: #4cc495; --s3: #ff6f88; --s4: #b597ff; --s5: #a0a0a0; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem;
  padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); background: var(--card); }
.brand { margin: 0; font-weight: 600; }
nav ul { display: flex; flex-wrap: wrap; gap: .2rem 1rem; margin: 0; padding: 0; list-style: none; }
nav a { color: var(--accent); text-decoration: none; }
nav a[aria-current="page"] { color: var(--fg); font-weight: 600; }
main { padding: 1rem 1.2rem 3rem; max-width: 1200px; }
h1 { margin: .2rem 0; font-size: 1.5rem; }
h2 { margin: 1.6rem 0 .4rem; font-size: 1.15rem; }
a { color: var(--accent); }
.range { margin: 0 0 1rem; color: var(--muted); }
.empty { color: var(--muted); font-style: italic; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: .7rem; }
.card { padding: .6rem .8rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--card); }
.card .value { display: block; font-size: 1.35rem; font-weight: 600; }
.card .label { color: var(--muted); font-size: .85rem; }
table { border-collapse: collapse; width: 100%; margin: .4rem 0 1rem; font-size: .9rem; }
th, td { padding: .3rem .5rem; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.text, .memory-text { white-space: pre-wrap; overflow-wrap: anywhere; }
td .memory-text { display: block; min-width: 32ch; }
.when { white-space: nowrap; }
figure { margin: .5rem 0 1rem; }
figcaption { color: var(--muted); font-size: .85rem; }
svg.chart { width: 100%; max-width: 760px; height: auto; }
svg .axis { stroke: var(--muted); stroke-width: 1; }
svg .tick { fill: var(--muted); font-size: 11px; }
svg .line { fill: none; stroke-width: 2; }
.s0 { fill: var(--s0); } .s1 { fill: var(--s1); } .s2 { fill: var(--s2); }
.s3 { fill: var(--s3); } .s4 { fill: var(--s4); } .s5 { fill: var(--s5); }
.l0 { stroke: var(--s0); } .l1 { stroke: var(--s1); } .l2 { stroke: var(--s2); }
.l3 { stroke: var(--s3); } .l4 { stroke: var(--s4); } .l5 { stroke: var(--s5); }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin: .5rem 0; }
form.filters label { display: flex; flex-direction: column; font-size: .85rem;
  color: var(--muted); }
input, select, button { font: inherit; color: inherit; background: var(--bg);
  border: 1px solid var(--line); border-radius: 4px; padding: .2rem .4rem; }
details.turn { border: 1px solid var(--line); border-radius: 6px; padding: .4rem .8rem;
  margin: .5rem 0; background: var(--card); }
details.turn summary { cursor: pointer; }
.tag { display: inline-block; padding: 0 .35rem; border-radius: 4px; border: 1px solid var(--line);
  font-size: .8rem; }
.bad { color: var(--s3); }
.pager { display: flex; gap: 1rem; }
"""
