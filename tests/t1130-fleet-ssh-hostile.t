#!/usr/bin/env bash
test_description='the ssh launcher never builds shell text from data: a hostile hostfile is
refused before anything runs, and what must reach the remote shell (the agent command, node
name, token file, token) is quoted so that sh reads it back byte for byte; a fake ssh runs the
remote command with sh as sshd does'
# asan: always: feeds untrusted bytes to C code: hostile hostfiles
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-fleet.sh"

test_require_in_ci FABSCOPE TEST_TOOL JQ
P=FABSCOPE,JQ

test_path_is_missing_() { ! test -e "$1" || { echo "$1 exists" >&2; return 1; }; }

# roundtrip WORD...: quoted by fabscope, read back by sh, the same bytes
roundtrip() {
	local line
	line=$("$TEST_TOOL" shquote "$@") || return 1
	printf "%s\0" "$@" >want.bin &&
	sh -c "printf '%s\\0' $line" >got.bin &&
	cmp want.bin got.bin
}

test_expect_success TEST_TOOL 'sh_quote: sh reads every word back byte for byte' '
	roundtrip plain "two words" "it'\''s" "'\''" "'\'''\''" "" "\$(touch PWNED)" "\`touch PWNED\`" \
		"a;b|c&d" "*" "~" "!x" "-n" "back\\slash" "tab	tab" "new
line" "\${IFS}" "\"dq\"" &&
	roundtrip "$(awk "BEGIN { for (i = 1; i < 128; i++) printf \"%c\", i }")" &&
	roundtrip "$(awk "BEGIN { for (i = 0; i < 300; i++) printf \"'\''\" }")" &&
	test_path_is_missing_ PWNED
'

test_expect_success TEST_TOOL 'sh_quote: a word that does not fit is left out whole' '
	test_expect_code 1 "$TEST_TOOL" shquote --len 12 abc "d'\''e" >out 2>err &&
	test "$(cat out)" = "'\''abc'\''" &&
	test_grep "word 4 does not fit" err &&
	"$TEST_TOOL" shquote --len 5 ab >out &&
	test "$(cat out)" = "'\''ab'\''"
'

cat >plan.ini <<'EOF'
[global]
timeout = 5

[ping]
kind = ping
EOF

test_expect_success $P 'a node name with shell in it is refused at its line, nothing runs (exit 2)' '
	printf "%s\n" "h1 rail0=127.0.0.1" "h2'\''\$(touch\${IFS}PWNED)'\'' rail0=127.0.0.1" >hosts &&
	test_expect_code 2 "$FABSCOPE" run plan.ini --launcher ssh --ssh /bin/false --hostfile hosts -o r1 >out 2>err &&
	test $(wc -l <err) = 1 &&
	test_grep "hosts:2: .* is not a node name: give a host name" err &&
	test_path_is_missing_ PWNED &&
	test_path_is_missing_ r1/results.jsonl
'

test_expect_success $P 'names with spaces, ESC, a leading dash or dot, or too long are refused' '
	for n in "-oProxyCommand=x" ".hidden" "a\$b" "a/b" "a\`b\`" "$(printf "a\033[2Jb")" \
		"$(printf "%0254d" 0)"; do
		printf "%s rail0=127.0.0.1\n" "$n" >hosts &&
		{ test_expect_code 2 "$FABSCOPE" run plan.ini --launcher ssh --ssh /bin/false --hostfile hosts -o r2 \
			>out 2>err || return 1; } &&
		test $(wc -l <err) = 1 || return 1
		! grep -q "$(printf "\033")" err || { echo "ESC reached stderr raw" >&2; return 1; }
	done &&
	printf "%s rail0=127.0.0.1\n" "node-01.rack_3:0" "$(printf "%0253d" 0)" >hosts &&
	"$FABSCOPE" run --dry-run plan.ini --hostfile hosts >out 2>err &&
	test_grep "2 nodes" out
'

test_expect_success $P 'ssh= that is an option, or holds shell, is refused (exit 2)' '
	for d in "-oProxyCommand=touch\${IFS}PWNED" "root@-oProxyCommand=x" "a;touch PWNED" "u@h@x" "@h" \
		"[::1;x]" "h:22"; do
		printf "h1 ssh=%s rail0=127.0.0.1\n" "$d" >hosts &&
		{ test_expect_code 2 "$FABSCOPE" run plan.ini --launcher ssh --ssh /bin/false --hostfile hosts -o r3 \
			>out 2>err || return 1; } &&
		test_grep "is not an ssh destination" err || return 1
	done &&
	printf "%s\n" "h1 ssh=root@node1 rail0=127.0.0.1" "h2 ssh=10.0.0.2 rail0=127.0.0.1" \
		"h3 ssh=[fe80::1] rail0=127.0.0.1" "h4 ssh=admin_x@h4.example.org rail0=127.0.0.1" >hosts &&
	"$FABSCOPE" run --dry-run plan.ini --hostfile hosts >out 2>err &&
	test_grep "4 nodes" out &&
	test_path_is_missing_ PWNED
'

# A fake ssh: its options up to "--" (which must come before the destination), the
# destination, then the remote command, which it joins with blanks and hands to sh -c, as
# sshd does with the user's shell.  Its argument vector is logged, one per line.
cat >fakessh <<'EOF'
#!/bin/sh
log=$(dirname "$0")/fakessh.log
printf '%s\n' "---" "$@" >>"$log"
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; break ;;
	-o) shift 2 ;;
	-*) shift ;;
	*) echo "fakessh: '$1' before any --: a destination ssh could read as an option" >&2; exit 255 ;;
	esac
done
shift
exec sh -c "$*"
EOF
chmod +x fakessh

test_expect_success $P 'the remote command over a shell: a token file with quotes and $(...) in its path' '
	dir="$TRASH_DIRECTORY/tok'\''\$(touch PWNED) \`touch PWNED\`" &&
	mkdir -p "$dir" &&
	printf "%s\n" 0123456789abcdef0123456789abcdef0123456789abcdef >"$dir/token" &&
	chmod 600 "$dir/token" &&
	printf "%s\n" "h1 ssh=root@h1 rail0=127.0.0.1" "h2 rail0=127.0.0.1" >hosts &&
	rm -f fakessh.log &&
	{ timeout 60 "$FABSCOPE" run plan.ini --launcher ssh --ssh "$TRASH_DIRECTORY/fakessh -o BatchMode=yes" \
		--hostfile hosts --token-file "$dir/token" -o r4 >out 2>err || { cat out err; false; }; } &&
	test $(jsonl_count r4/results.jsonl ".test == \"ping\" and .status == \"ok\"") = 2 &&
	test_path_is_missing_ PWNED &&
	test_path_is_missing_ "$dir/PWNED" &&
	grep -x -A1 -- "--" fakessh.log >dests &&
	test_grep -x "root@h1" dests &&
	test_grep -x "h2" dests
'

test_expect_success $P 'the remote command over a shell: the token inline, an agent command of two words' '
	printf "%s\n" "h1 rail0=127.0.0.1" "h2 rail0=127.0.0.1" >hosts &&
	printf "%s\n" "#!/bin/sh" "exec \"\$@\"" >wrap &&
	chmod +x wrap &&
	{ timeout 60 "$FABSCOPE" run plan.ini --launcher ssh --ssh "$TRASH_DIRECTORY/fakessh" \
		--agent-cmd "$TRASH_DIRECTORY/wrap $FABSCOPE" --hostfile hosts -o r5 >out 2>err ||
		{ cat out err; false; }; } &&
	test $(jsonl_count r5/results.jsonl ".test == \"ping\" and .status == \"ok\"") = 2 &&
	test_path_is_missing_ PWNED
'

# token_seen_by TOKEN EXCEPT-PID: the PIDs (but EXCEPT-PID) whose argument list or environment
# holds TOKEN: what ps (ps -ef, ps e) would show
token_seen_by() {
	local f p
	for f in /proc/[0-9]*; do
		p=${f#/proc/}
		[ "$p" = "$2" ] && continue
		{ tr "\0" "\n" <"$f/cmdline"; tr "\0" "\n" <"$f/environ"; } 2>/dev/null | grep -q -F "$1" && echo "$p"
	done
	return 0
}

have_agents() { test -n "$(fleet_agents "$1")"; }

cat >plan-bw.ini <<'EOF'
[global]
timeout = 5

[bw]
kind = pairwise
test = bw
duration = 3
EOF

for launcher in ssh local; do
	test_expect_success $P "the token is in no argument list or environment of the agents: $launcher" '
		tok=$(od -An -tx1 -N24 /dev/urandom | tr -d " \n") &&
		test ${#tok} = 48 &&
		printf "%s\n" "h1 rail0=127.0.0.1" "h2 rail0=127.0.0.1" >hosts &&
		rm -rf r-'$launcher' seen &&
		FABSCOPE_TOKEN=$tok fleet_run_bg run.log plan-bw.ini --launcher '$launcher' \
			--ssh "$TRASH_DIRECTORY/fakessh" --hostfile hosts -o r-'$launcher' &&
		test_wait_for 20 have_agents $fleet_pid &&
		for i in 1 2 3 4 5 6 7 8 9 10; do
			token_seen_by "$tok" $fleet_pid >>seen || return 1
			sleep 0.2
		done &&
		test_must_be_empty seen &&
		fleet_wait $fleet_pid 60 &&
		{ test $fleet_rc = 0 || { cat run.log; false; }; } &&
		test $(jsonl_count r-'$launcher'/results.jsonl ".test == \"bw\" and .scope == \"aggregate\" and .status == \"ok\" and (.retest_for | not)") = 1
	'
done

test_expect_success FABSCOPE 'agent --token-stdin: with --connect or --token-file refused; an empty or missing line is an error' '
	test_expect_code 2 "$FABSCOPE" agent --connect 127.0.0.1:1 --token-stdin </dev/null 2>err &&
	test_grep "token-stdin is for --stdio and --fd" err &&
	test_expect_code 2 "$FABSCOPE" agent --stdio --token-stdin --token-file /etc/hostname </dev/null 2>err &&
	test_expect_code 4 "$FABSCOPE" agent --stdio --token-stdin --name a </dev/null >out 2>err &&
	test_grep "closed before the token" err &&
	printf "\n" | test_expect_code 2 "$FABSCOPE" agent --stdio --token-stdin --name a >out 2>err &&
	test_grep "empty or not text" err
'

test_expect_success $P 'a token file others can read is refused (exit 3) unless --allow-readable-token' '
	echo 0123456789abcdef0123456789abcdef >tok644 &&
	chmod 644 tok644 &&
	printf "%s\n" "h1 rail0=127.0.0.1" "h2 rail0=127.0.0.1" >hosts &&
	test_expect_code 3 "$FABSCOPE" run plan.ini --hostfile hosts --token-file tok644 -o r6 >out 2>err &&
	test_grep "token file .tok644. can be read or written by others (mode 0644): chmod 600 it" err &&
	test_path_is_missing_ r6/results.jsonl &&
	test_expect_code 3 "$FABSCOPE" agent --connect 127.0.0.1:1 --token-file tok644 --name a >out 2>err &&
	test_grep "chmod 600 it, or give --allow-readable-token" err &&
	chmod 620 tok644 &&
	test_expect_code 3 "$FABSCOPE" agent --connect 127.0.0.1:1 --token-file tok644 --name a >out 2>err &&
	chmod 644 tok644 &&
	rm -f fakessh.log &&
	timeout 60 "$FABSCOPE" run plan.ini --hostfile hosts --token-file "$PWD/tok644" --allow-readable-token \
		--launcher ssh --ssh "$TRASH_DIRECTORY/fakessh" -o r7 >out 2>err &&
	test_grep "warning: token file .* (mode 0644), accepted" err &&
	test $(jsonl_count r7/results.jsonl ".test == \"ping\" and .status == \"ok\"") = 2 &&
	test_grep -F -- " '\''--allow-readable-token'\''" fakessh.log
'

test_expect_success $P 'an agent may not name itself with shell or control characters (exit 2)' '
	test_expect_code 2 "$FABSCOPE" agent --stdio --name "a\$(x)" </dev/null >out 2>err &&
	test_grep "is not a node name: give --name" err &&
	test_expect_code 2 env FABSCOPE_NODE="$(printf "x\033]0;y")" "$FABSCOPE" agent --stdio </dev/null >out 2>err &&
	test_grep "the node name .* is not a node name" err &&
	! grep -q "$(printf "\033")" err
'

test_done
