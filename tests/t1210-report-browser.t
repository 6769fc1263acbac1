#!/usr/bin/env bash
test_description='the HTML report in a real browser: headless Chromium loads report.html, the DOM
has every plot as an inline SVG with its caption, and a screenshot of the page with plots
carries far more picture than the same report without plots; the first screen (a screenshot of
1280 x 800) holds the verdict with the failing checks and endpoints, and what was tested; a fleet
of 512 nodes x 8 rails (test-tool nightly) gets its leaf x leaf heatmaps and worst tables in a
page that stays small'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-report.sh"

test_lazy_prereq CHROMIUM 'command -v chromium'
test_lazy_prereq GNUPLOT 'command -v gnuplot'
test_require_in_ci FABSCOPE JQ CHROMIUM GNUPLOT
P=FABSCOPE,JQ,CHROMIUM,GNUPLOT

# chrome ARGS...: headless Chromium, bounded, in a profile of its own (root needs --no-sandbox)
chrome() {
	timeout 60 chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TRASH_DIRECTORY/chrome-profile" --hide-scrollbars "$@" 2>>chrome.log
}

# png_size FILE: "WIDTH HEIGHT" from the IHDR chunk
png_size() {
	od -An -tu1 -j16 -N8 "$1" | awk '{ print $1*16777216 + $2*65536 + $3*256 + $4, $5*16777216 + $6*65536 + $7*256 + $8 }'
}

test_expect_success $P 'a report with plots and one without' '
	mkfabric ecmp "{\"lb\":\"ecmp\"}" h4 0.02 0.19 &&
	test_expect_exit 5 "$FABSCOPE" report ecmp -o with >/dev/null &&
	test_expect_exit 5 "$FABSCOPE" report ecmp -o without --no-plots >/dev/null &&
	test $(ls with/plots/*.svg | wc -l) -ge 5
'

test_expect_success $P 'Chromium: every plot is in the DOM as an SVG, with its caption' '
	chrome --dump-dom "file://$TRASH_DIRECTORY/with/report.html" >dom.html &&
	test $(grep -o "<svg" dom.html | wc -l) = $(ls with/plots/*.svg | wc -l) &&
	test $(grep -o "<figcaption>" dom.html | wc -l) = $(ls with/plots/*.svg | wc -l) &&
	grep -q "<h2>Suspects</h2>" dom.html &&
	grep -q "h4 rail 1: slow with 3 of 3 peers" dom.html
'

test_expect_success $P 'Chromium: the screenshot shows the plots (a page with them holds far more picture)' '
	# (tall enough for every plot, below the verdict, what was tested and the tables)
	chrome --window-size=1100,6000 --screenshot="$TRASH_DIRECTORY/with.png" "file://$TRASH_DIRECTORY/with/report.html" &&
	chrome --window-size=1100,6000 --screenshot="$TRASH_DIRECTORY/without.png" "file://$TRASH_DIRECTORY/without/report.html" &&
	test "$(png_size with.png)" = "1100 6000" &&
	w=$(stat -c %s with.png) && wo=$(stat -c %s without.png) &&
	echo "screenshot bytes: with plots $w, without $wo" &&
	test $((2 * w)) -gt $((3 * wo))
'

test_expect_success $P 'Chromium: every plot is laid out at full size with its drawing in it' '
	# a copy of the page with a script that measures each plot as the browser laid it out
	sed "s|</body>|<script>var o=[];document.querySelectorAll(\"figure svg\").forEach(function(e){var r=e.getBoundingClientRect();o.push(Math.round(r.width)+\" \"+Math.round(r.height)+\" \"+e.querySelectorAll(\"path,rect,text,polygon,polyline\").length)});var p=document.createElement(\"pre\");p.id=\"probe\";p.textContent=o.join(\";\");document.body.appendChild(p);</script></body>|" \
		with/report.html >with/probe.html &&
	chrome --window-size=1100,4000 --dump-dom "file://$TRASH_DIRECTORY/with/probe.html" >probe.dom &&
	sed -n "s/.*<pre id=\"probe\">\([^<]*\)<\/pre>.*/\1/p" probe.dom | tr ";" "\n" >sizes &&
	test $(wc -l <sizes) = $(ls with/plots/*.svg | wc -l) &&
	awk "\$1 < 400 || \$2 < 250 || \$3 < 20 { print \"too small or empty: \" \$0; bad = 1 } END { exit bad }" sizes
'

# first_screen DIR: the report of DIR as a browser of 1280 x 800 lays it out: its screenshot in
#	DIR.png, and in DIR.probe a line per part, "PART BOTTOM TEXT" (BOTTOM in pixels from the top):
#	the verdict badge, the first failing check, the table of what was tested; then "screen H"
first_screen() {
	cat >"$1/probe.js" <<-\EOF &&
	var out = [];
	function part(name, e) {
		if (e)
			out.push(name + " " + Math.round(e.getBoundingClientRect().bottom) + " " +
				 e.innerText.replace(/\s+/g, " ").trim());
	}
	var tested = null;
	document.querySelectorAll("h2").forEach(function (h) {
		if (h.textContent == "What was tested")
			tested = h.nextElementSibling;
	});
	part("verdict", document.querySelector(".verdict"));
	part("failing", document.querySelector("li.failing"));
	part("tested", tested);
	out.push("screen " + window.innerHeight);
	var pre = document.createElement("pre");
	pre.id = "probe";
	pre.textContent = out.join("|");
	document.body.appendChild(pre);
	EOF
	sed "s|</body>|<script src=\"probe.js\"></script></body>|" "$1/report.html" >"$1/first.html" &&
	chrome --window-size=1280,800 --screenshot="$TRASH_DIRECTORY/$1.png" "file://$TRASH_DIRECTORY/$1/report.html" &&
	test "$(png_size "$1.png")" = "1280 800" &&
	chrome --window-size=1280,800 --dump-dom "file://$TRASH_DIRECTORY/$1/first.html" >"$1.dom" &&
	sed -n "s/.*<pre id=\"probe\">\([^<]*\)<\/pre>.*/\1/p" "$1.dom" | tr "|" "\n" |
		sed "s/&gt;/>/g; s/&lt;/</g; s/&amp;/\&/g" >"$1.probe" &&
	cat "$1.probe"
}

# on_screen PROBE PART: PART of the probe ends within the screen's height
on_screen() {
	awk -v part="$2" "\$1 == \"screen\" { h = \$2 } \$1 == part { b = \$2 } END { if (!b || !h || b > h) { print part \" ends at \" b \" of \" h; exit 1 } }" "$1"
}

test_expect_success $P 'Chromium: the first screen shows the verdict, the failing checks with endpoints, what was tested' '
	# a slow h4 on rail 1, judged: FAIL naming the pairs
	printf "[bw]\nline_rate_gbps = 0.2\nmin_fraction = 0.9\n[lat]\np50_us_max = 5\n" >th.ini &&
	test_expect_exit 1 "$FABSCOPE" report ecmp -o fail --no-plots --thresholds th.ini >/dev/null &&
	first_screen fail &&
	test_grep "^verdict [0-9]* FAIL$" fail.probe &&
	test_grep "^failing [0-9]* bw >= 0.9 x line rate, every pair: h1-h4 rail 1 (0.02), h2-h4 rail 1 (0.02), h3-h4 rail 1 (0.02)$" fail.probe &&
	test_grep "^tested [0-9]* .*nodes 4 (h1, h2, h3, h4) rails and planes rails 0, 1 (2 lanes) link speeds 0.2 Gb/s (\[bw\] line_rate_gbps of th.ini).* phase pw bw: 12 of 12 pairs on 2 lanes, one way phase lat lat: 6 of 6 pairs on 1 lane, one way" fail.probe &&
	on_screen fail.probe verdict && on_screen fail.probe failing && on_screen fail.probe tested &&
	# no thresholds: INCOMPLETE, naming the phases, on the first screen too
	first_screen with &&
	test_grep "^verdict [0-9]* INCOMPLETE$" with.probe &&
	on_screen with.probe verdict && on_screen with.probe tested
'

# The report's HTML of a 512-node night stays under 2 MiB (16,384 nodes: under 4 MiB, in
# bench/scale-bench.sh); the browser loads it within the same bounded time.
test_expect_success $P 'Chromium: a 512-node fleet, leaf x leaf heatmaps and worst tables, a bounded page' '
	"$TEST_TOOL" nightly night -n 512 --seed 28 >faults &&
	test_expect_exit 5 "$FABSCOPE" report night -o big >/dev/null &&
	test $(stat -c %s big/report.html) -lt $((2 * 1024 * 1024)) &&
	chrome --dump-dom "file://$TRASH_DIRECTORY/big/report.html" >big.dom &&
	test $(grep -o "<svg" big.dom | wc -l) = $(ls big/plots/*.svg | wc -l) &&
	test $(grep -c "<figcaption>[^<]*leaf x leaf" big.dom) = 16 &&
	grep -q "<h2>Worst pairs and nodes</h2>" big.dom &&
	node=$(awk "\$1 == \"node\" && \$3 == \"bw\" { print \$5; exit }" faults) &&
	grep -q "<td>$node</td>" big.dom
'

test_done
