# tests/lib-fabric.sh - helpers of the tests on ci/netns-fabric (source it after test-lib.sh; set
# FABRIC to the script and PFX to the fabric's prefix first)
#
#	fab VERB ARGS...          ci/netns-fabric VERB -p $PFX ARGS...
#	one_line FILE             FILE holds exactly one line (errors are one line)
#	our_ns, expect_ns NODE... the namespaces of the prefix now; are they exactly these nodes'
#	reach_from NODE SRC DST...  from SRC in NODE, an ICMP echo to each DST is answered in 1 s
#	reach_all [KEY]           every hostfile endpoint KEY= (default rail[0-9]*) reaches the others
#	tx NODE DEV               packets sent by DEV in NODE
#	qdisc_rate NODE DEV, check_rate RATE NODE:DEV...   the tbf rate of a port; each is RATE

fab() { # VERB ARGS...: ci/netns-fabric VERB -p $PFX ARGS...
	"$FABRIC" "$1" -p "$PFX" "${@:2}"
}

# one_line FILE: FILE holds exactly one line (errors are one line)
one_line() {
	[ "$(wc -l <"$1")" = 1 ] && return 0
	echo "one_line: '$1' should hold one line; it holds:" >&2
	cat "$1" >&2
	return 1
}

# our_ns: the namespaces of the prefix that exist now, sorted
our_ns() {
	ip netns list | awk -v p="$PFX-" 'index($1, p) == 1 {print $1}' | sort
}

# expect_ns NODE...: the namespaces of the prefix are exactly these nodes'
expect_ns() {
	printf "$PFX-%s\n" "$@" | sort >ns.expect &&
	our_ns >ns.actual &&
	test_cmp ns.expect ns.actual
}

reach_from() { # NODE SRC DST...: an ICMP echo from SRC to each DST is answered within 1 s
	local node=$1 src=$2
	shift 2
	if command -v ping >/dev/null; then
		fab exec "$node" sh -c '
			src=$1 rc=0; shift
			for d; do
				ping -q -n -c1 -W1 -I "$src" "$d" >/dev/null || { echo "no reply: $src -> $d"; rc=1; }
			done
			exit $rc' sh "$src" "$@"
	else
		fab exec "$node" perl -MNet::Ping -e '
			my $src = shift; my $p = Net::Ping->new("icmp", 1); $p->bind($src); my $rc = 0;
			for my $d (@ARGV) { $p->ping($d) or do { print "no reply: $src -> $d\n"; $rc = 1 } }
			exit $rc' "$src" "$@"
	fi
}

# reach_all [KEY]: from every hostfile endpoint KEY=ADDRESS of every host (KEY a sed regex:
# rail[0-9]* for plane 0, rail[0-9]*/1 for plane 1), every such endpoint of every other host
# answers an ICMP echo
reach_all() {
	set -- "${1:-rail[0-9]*}"
	local hf=reach.hosts name line src dst srcs rc=0
	fab hostfile | grep -v "^#" >$hf || return 1
	while read -r name line; do
		srcs=$(echo "$line" | tr " " "\n" | sed -n "s|^$1=||p")
		dst=$(grep -v "^$name " $hf | tr " " "\n" | sed -n "s|^$1=||p")
		[ -n "$srcs" ] && [ -n "$dst" ] || { echo "reach_all: no endpoint $1 in $hf" >&2; return 1; }
		for src in $srcs; do
			echo "$name: $src -> $(echo $dst)"
			reach_from "$name" "$src" $dst || rc=1
		done
	done <$hf
	return $rc
}

# tx NODE DEV: packets sent by DEV in NODE
tx() { fab exec "$1" cat "/sys/class/net/$2/statistics/tx_packets"; }

# qdisc_rate NODE DEV: the tbf rate on DEV in NODE ("200Mbit"), empty when unshaped
qdisc_rate() {
	ip -n "$PFX-$1" -o link show dev "$2" >/dev/null &&
	tc -n "$PFX-$1" qdisc show dev "$2" | awk '$2 == "tbf" { for (i = 3; i < NF; i++) if ($i == "rate") print $(i + 1) }'
}

# check_rate RATE NODE:DEV...: each has a tbf of RATE
check_rate() {
	local want=$1 nd got
	shift
	for nd; do
		got=$(qdisc_rate "${nd%%:*}" "${nd#*:}") || return 1
		if [ "$got" != "$want" ]; then
			echo "check_rate: ${nd%%:*} dev ${nd#*:}: tbf rate '$got', want '$want'" >&2
			tc -n "$PFX-${nd%%:*}" qdisc show dev "${nd#*:}" >&2
			return 1
		fi
	done
}
