"""The operator's page: a read-only web view of what the memory does, served by the bot process
(aiohttp, in the bot's event loop) or on its own by `echo-bot web`.

server.py   the app, the token guard, the security headers, start and stop
html.py     markup that escapes every text it is given (memory texts are user input)
charts.py   bar and line charts as SVG, drawn by the server
pages.py    overview, memory health, people, turns, stories
style.py    the stylesheet (light and dark follow the browser)
"""
