#!/usr/bin/env bash
test_description='core/record and core/output: record_new, labels, paths, latency in us,
and the text and JSON renderings of the same records'
. "$(dirname "$0")/test-lib.sh"

test_require_in_ci TEST_TOOL JQ FABSCOPE

test_expect_success TEST_TOOL,JQ 'record_new: schema, tool, version, test, UTC time of now' '
	before=$(date -u +%s) &&
	"$TEST_TOOL" record bw >rec &&
	after=$(date -u +%s) &&
	jq -e ".schema == \"fabscope.record/1\" and .tool == \"fabscope\" and .test == \"bw\"" rec &&
	jq -r "keys_unsorted | join(\" \")" rec >actual &&
	echo "schema tool version time test" >expect &&
	test_cmp expect actual &&
	jq -r .version rec >version &&
	test_grep -E "^[0-9]+\.[0-9]+\.[0-9]+" version &&
	jq -r .time rec >time &&
	test_grep -E "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$" time &&
	t=$(date -u -d "$(cat time)" +%s) &&
	test $before -le $t && test $t -le $after
'

test_expect_success TEST_TOOL,JQ,FABSCOPE 'record_new: the version is the one fabscope --version prints' '
	"$TEST_TOOL" record lat >rec &&
	"$FABSCOPE" --version >out &&
	test_grep "^fabscope $(jq -r .version rec) " out
'

test_expect_success TEST_TOOL,JQ 'record_new then fields: nested objects made on the way' '
	"$TEST_TOOL" record lat msg_size_bytes=2 "metrics.lat_us.p50=1.5" \
		"metrics.iters=1000" "labels={\"lb\":\"ecmp\"}" >rec &&
	jq -e ".metrics.lat_us.p50 == 1.5 and .metrics.iters == 1000 and
	       .msg_size_bytes == 2 and .labels.lb == \"ecmp\" and .test == \"lat\"" rec
'

test_expect_success TEST_TOOL 'record_get, record_num, record_str by dotted path, array indexes' '
	"$TEST_TOOL" get "{\"a\":{\"b\":1.5,\"c\":\"s\",\"i\":7},\"d\":[1]}" \
		a.b a.c a.i d a.x x.y a.b.c a..b d.0 d.1 d.x d.-1 d. >actual &&
	cat >expect <<-\EOF &&
	a.b 1.5 num=1.5 str=(none)
	a.c "s" num=-1 str=s
	a.i 7 num=7 str=(none)
	d [1] num=-1 str=(none)
	a.x (absent) num=-1 str=(none)
	x.y (absent) num=-1 str=(none)
	a.b.c (absent) num=-1 str=(none)
	a..b (absent) num=-1 str=(none)
	d.0 1 num=1 str=(none)
	d.1 (absent) num=-1 str=(none)
	d.x (absent) num=-1 str=(none)
	d.-1 (absent) num=-1 str=(none)
	d. [1] num=-1 str=(none)
	EOF
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'record_get: a path segment of 64 characters or more is absent' '
	k63=$(printf "%063d" 0) && k64=$(printf "%064d" 0) &&
	"$TEST_TOOL" get "{\"$k63\":1,\"$k64\":2}" $k63 $k64 >actual &&
	printf "%s 1 num=1 str=(none)\n%s (absent) num=-1 str=(none)\n" $k63 $k64 >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'record_labels: K=V pairs, empty values, "=" in values, last wins' '
	"$TEST_TOOL" labels lb=ecmp rail=0 empty= "eq=a=b" lb=spray >actual &&
	echo "{\"lb\":\"spray\",\"rail\":\"0\",\"empty\":\"\",\"eq\":\"a=b\"}" >expect &&
	test_cmp expect actual &&
	"$TEST_TOOL" labels >actual &&
	echo "{}" >expect &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'record_labels: a comma separates labels, in one argument or several' '
	"$TEST_TOOL" labels lb=ecmp,fabric=pod3 "eq=a=b,x=" lb=spray >actual &&
	echo "{\"lb\":\"spray\",\"fabric\":\"pod3\",\"eq\":\"a=b\",\"x\":\"\"}" >expect &&
	test_cmp expect actual &&
	for bad in "a=1,b" "a=1," ",a=1" "a=1,,b=2" "rails=0,1"; do
		test_expect_code 1 "$TEST_TOOL" labels "$bad" 2>err &&
		test_grep "bad label .$bad.$" err || return 1
	done
'

test_expect_success TEST_TOOL 'record_labels: no "=", an empty key, a key too long: named' '
	test_expect_code 1 "$TEST_TOOL" labels a=1 noequals b=2 2>err &&
	test_grep "bad label .noequals.$" err &&
	test_expect_code 1 "$TEST_TOOL" labels =v 2>err &&
	test_grep "bad label .=v.$" err &&
	k127=$(printf "%0127d" 0) && k128=$(printf "%0128d" 0) &&
	"$TEST_TOOL" labels "$k127=v" >out &&
	test_grep "$k127" out &&
	test_expect_code 1 "$TEST_TOOL" labels "$k128=v" 2>err &&
	test_grep "bad label .$k128=v.$" err
'

test_expect_success TEST_TOOL,JQ 'record_lat_us: nanoseconds in, microseconds out' '
	printf "%s\n" 100 200 300 1000 | "$TEST_TOOL" lat-us >lat &&
	jq -c "keys_unsorted" lat >actual &&
	echo "[\"min\",\"p50\",\"p90\",\"p99\",\"p999\",\"max\",\"avg\",\"stdev\"]" >expect &&
	test_cmp expect actual &&
	jq -c "map_values(. * 1000 | round)" lat >actual &&
	echo "{\"min\":100,\"p50\":200,\"p90\":1000,\"p99\":1000,\"p999\":1000,\"max\":1000,\"avg\":400,\"stdev\":354}" >expect &&
	test_cmp expect actual &&
	"$TEST_TOOL" lat-us </dev/null >lat &&
	jq -e "[.[]] | length == 8 and all(. == 0)" lat
'

test_expect_success TEST_TOOL 'record_derive: a copy with the scope; changing it leaves the template' '
	"$TEST_TOOL" derive "{\"test\":\"bw\",\"scope\":\"aggregate\",\"src\":{\"port\":9}}" flow >actual &&
	cat >expect <<-\EOF &&
	{"test":"bw","scope":"flow","src":{"port":1}}
	{"test":"bw","scope":"aggregate","src":{"port":9}}
	EOF
	test_cmp expect actual
'

# records as bw and lat make them
test_expect_success 'setup records' '
	cat >recs.json <<-\EOF
	[
	{"schema":"fabscope.record/1","test":"bw","msg_size_bytes":65536,"dir":"c2s","flows":2,"scope":"flow","flow":0,"src":{"port":40000},"metrics":{"bw_gbps":0.5,"msg_rate_mpps":0.0009537,"bytes":125000000,"msgs":1907,"duration_s":2.0},"status":"ok"},
	{"schema":"fabscope.record/1","test":"bw","msg_size_bytes":65536,"dir":"c2s","flows":2,"scope":"flow","flow":1,"src":{"port":40001},"metrics":{"bw_gbps":0.75,"msg_rate_mpps":0.0014305,"bytes":187500000,"msgs":2861,"duration_s":2.0},"status":"ok"},
	{"schema":"fabscope.record/1","test":"bw","msg_size_bytes":65536,"dir":"c2s","flows":2,"scope":"aggregate","metrics":{"bw_gbps":1.25,"msg_rate_mpps":0.0023842,"bytes":312500000,"msgs":4768,"duration_s":2.0},"status":"ok","labels":{"lb":"ecmp"}},
	{"schema":"fabscope.record/1","test":"lat","msg_size_bytes":2,"flows":1,"scope":"aggregate","metrics":{"iters":1000,"lat_us":{"min":1.5,"p50":2.25,"p90":3.0,"p99":4.5,"p999":9.75,"max":12.0,"avg":2.5,"stdev":0.75}},"status":"ok"}
	]
	EOF
'

test_expect_success TEST_TOOL,JQ 'JSON rendering: one array, a record a line, equal to the input' '
	"$TEST_TOOL" render json recs.json >out &&
	test "$(wc -l <out)" = 6 &&
	head -n 1 out >first && echo "[" >expect && test_cmp expect first &&
	jq -S . recs.json >expect &&
	jq -S . out >actual &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL,JQ 'JSON rendering: no records is an empty array; comments are not written' '
	echo "[]" >none.json &&
	"$TEST_TOOL" render json none.json --comment=hello >out &&
	echo "[]" >expect &&
	test_cmp expect out &&
	"$TEST_TOOL" render text none.json >out &&
	test_must_be_empty out
'

test_expect_success TEST_TOOL 'text rendering: the same numbers, MB/s by default' '
	"$TEST_TOOL" render text recs.json --comment="a comment" >actual &&
	cat >expect <<-\EOF &&
	# a comment
	     size   dir  flow  sport        msgs          bytes    secs    BW [MB/s]  rate [Mpps]
	      64K   c2s     0  40000        1907      125000000   2.000        62.50       0.0010
	      64K   c2s     1  40001        2861      187500000   2.000        93.75       0.0014
	      64K   c2s   sum      -        4768      312500000   2.000       156.25       0.0024
	     size     iters       min       p50       p90       p99     p99.9       max       avg     stdev  [us, one-way = round trip / 2]
	        2      1000      1.50      2.25      3.00      4.50      9.75     12.00      2.50      0.75
	EOF
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'text rendering: --gbits shows Gb/s as in the records' '
	"$TEST_TOOL" render text recs.json --gbits >actual &&
	cat >expect <<-\EOF &&
	     size   dir  flow  sport        msgs          bytes    secs    BW [Gb/s]  rate [Mpps]
	      64K   c2s     0  40000        1907      125000000   2.000         0.50       0.0010
	      64K   c2s     1  40001        2861      187500000   2.000         0.75       0.0014
	      64K   c2s   sum      -        4768      312500000   2.000         1.25       0.0024
	     size     iters       min       p50       p90       p99     p99.9       max       avg     stdev  [us, one-way = round trip / 2]
	        2      1000      1.50      2.25      3.00      4.50      9.75     12.00      2.50      0.75
	EOF
	test_cmp expect actual
'

test_expect_success TEST_TOOL,JQ 'text and JSON agree on every bw cell of every record' '
	"$TEST_TOOL" render text recs.json >text &&
	"$TEST_TOOL" render json recs.json >json &&
	jq -r ".[] | select(.test == \"bw\") |
		[.metrics.msgs, .metrics.bytes, (.metrics.bw_gbps * 125 * 100 | round)] | @tsv" json >expect &&
	awk "\$1 ~ /^[0-9]/ && NF == 9 { printf \"%s\t%s\t%d\n\", \$5, \$6, \$8 * 100 + 0.5 }" text >actual &&
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'text: a record with status error shows the error after its cells' '
	cat >err.json <<-\EOF &&
	[{"test":"bw","msg_size_bytes":1048576,"dir":"c2s","flows":1,"scope":"aggregate","status":"error","error":"peer went away"}]
	EOF
	"$TEST_TOOL" render text err.json >actual &&
	cat >expect <<-\EOF &&
	     size   dir  flow  sport        msgs          bytes    secs    BW [MB/s]  rate [Mpps]
	       1M   c2s   sum      -           -              -       -            -            -  error: peer went away
	EOF
	test_cmp expect actual &&
	"$TEST_TOOL" render json err.json >out &&
	test_grep "\"status\":\"error\",\"error\":\"peer went away\"" out
'

test_expect_success TEST_TOOL 'text: the flow record of a single flow is not printed, the sum is' '
	cat >one.json <<-\EOF &&
	[
	{"test":"bw","msg_size_bytes":4096,"dir":"s2c","flows":1,"scope":"flow","flow":0,"src":{"port":40001},"metrics":{"bw_gbps":10,"msg_rate_mpps":0.305,"bytes":2500000000,"msgs":610352,"duration_s":2.0}},
	{"test":"bw","msg_size_bytes":4096,"dir":"s2c","flows":1,"scope":"aggregate","metrics":{"bw_gbps":10,"msg_rate_mpps":0.305,"bytes":2500000000,"msgs":610352,"duration_s":2.0}}
	]
	EOF
	"$TEST_TOOL" render text one.json >actual &&
	cat >expect <<-\EOF &&
	     size   dir  flow  sport        msgs          bytes    secs    BW [MB/s]  rate [Mpps]
	       4K   s2c   sum      -      610352     2500000000   2.000      1250.00       0.3050
	EOF
	test_cmp expect actual &&
	"$TEST_TOOL" render json one.json >out &&
	test_grep "\"scope\":\"flow\"" out
'

test_expect_success TEST_TOOL 'text: a header each time the test changes; unknown tests as JSON' '
	cat >mixed.json <<-\EOF &&
	[
	{"test":"bw","msg_size_bytes":1536,"scope":"aggregate","metrics":{"bw_gbps":8}},
	{"test":"lat","msg_size_bytes":2,"metrics":{"iters":5}},
	{"test":"probe","x":1},
	{"test":"bw","msg_size_bytes":2,"scope":"aggregate","metrics":{"bw_gbps":0.008}}
	]
	EOF
	"$TEST_TOOL" render text mixed.json >actual &&
	cat >expect <<-\EOF &&
	     size   dir  flow  sport        msgs          bytes    secs    BW [MB/s]  rate [Mpps]
	     1536     -   sum      -           -              -       -      1000.00            -
	     size     iters       min       p50       p90       p99     p99.9       max       avg     stdev  [us, one-way = round trip / 2]
	        2         5         -         -         -         -         -         -         -         -
	{"test":"probe","x":1}
	     size   dir  flow  sport        msgs          bytes    secs    BW [MB/s]  rate [Mpps]
	        2     -   sum      -           -              -       -         1.00            -
	EOF
	test_cmp expect actual
'

test_expect_success TEST_TOOL 'JSON rendering writes reals with 10 significant digits' '
	echo "[{\"test\":\"bw\",\"metrics\":{\"bw_gbps\":93.123456789012,\"bytes\":123456789012345}}]" >prec.json &&
	"$TEST_TOOL" render json prec.json >out &&
	test_grep "\"bw_gbps\":93.12345679," out &&
	test_grep "\"bytes\":123456789012345}" out
'

test_expect_success TEST_TOOL 'render: a file that is not a JSON array is a usage error' '
	echo "{}" >obj.json &&
	test_expect_code 2 "$TEST_TOOL" render text obj.json 2>err &&
	test_grep "does not hold a JSON array" err &&
	test_expect_code 2 "$TEST_TOOL" render text no-such-file 2>err &&
	test_grep "unable to read .no-such-file." err
'

test_done
