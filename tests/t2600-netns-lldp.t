#!/usr/bin/env bash
test_description='fabscope topo show: LLDP neighbours heard by listening (no lldpd on the host),
against what lldpd itself says: lldpd runs in both namespaces of a veth pair, the "switch" side
named leaf-1 with ifname port IDs; topo show on the "host" side names the same system, chassis
and port as lldpcli there; an interface whose other end sends no LLDP is said so within --listen'
# asan: always: feeds untrusted bytes to C code: LLDP frames heard on the wire
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-netns.sh"

test_lazy_prereq LLDPD 'command -v lldpd && command -v lldpcli'
test_require_in_ci ROOT NETNS FABSCOPE JQ LLDPD
P=$NETNS_PREREQS,FABSCOPE,JQ,LLDPD

SW=$NETNS_PFX-va HOSTIF=$NETNS_PFX-vb

# lldpd_up a|b: lldpd in the foreground in that side, its control socket in the trash, on its veth
lldpd_up() {
	local side=$1 dir="$TRASH_DIRECTORY/lldpd-$1"
	mkdir -p "$dir" &&
	netns_spawn "$side" "$dir/log" lldpd -d -u "$dir/ctl" -I "$NETNS_PFX-v$side" &&
	for i in $(seq 50); do
		[ -S "$dir/ctl" ] && return 0
		sleep 0.1
	done
	echo "lldpd in $side made no control socket; its log:" >&2
	cat "$dir/log" >&2
	return 1
}

lcli() { # SIDE ARGS...
	local side=$1
	shift
	netns_exec "$side" lldpcli -u "$TRASH_DIRECTORY/lldpd-$side/ctl" "$@"
}

test_expect_success $P 'a veth pair with lldpd at both ends, the switch side named leaf-1' '
	netns_pair_up &&
	lldpd_up a && lldpd_up b &&
	lcli a configure system hostname leaf-1 &&
	lcli a configure lldp portidsubtype ifname &&
	lcli a configure lldp tx-interval 1 &&
	lcli a update &&
	for i in $(seq 100); do
		lcli b -f json show neighbors >lldpcli.json &&
		jq -e ".lldp.interface[\"$HOSTIF\"].chassis[\"leaf-1\"] and
			.lldp.interface[\"$HOSTIF\"].port.id.type == \"ifname\"" lldpcli.json >/dev/null && break
		sleep 0.2
	done &&
	jq -e ".lldp.interface[\"$HOSTIF\"].chassis[\"leaf-1\"]" lldpcli.json >/dev/null
'

test_expect_success $P 'topo show hears the neighbour that lldpcli shows: system, chassis, port' '
	netns_exec b "$FABSCOPE" topo show -i "$HOSTIF" --listen 20 --json >show.json &&
	jq -e ".schema == \"fabscope.topo-show/1\" and (.ports | length) == 1" show.json >/dev/null &&
	jq -r ".ports[0].neighbor | [.sys_name, .chassis, .port, .port_subtype] | @tsv" show.json >actual &&
	jq -r ".lldp.interface[\"$HOSTIF\"] | [(.chassis | keys[0]), (.chassis[] | .id.value), .port.id.value,
		5] | @tsv" lldpcli.json >expect &&
	test_cmp expect actual &&
	printf "leaf-1\t%s\t5\n" "$SW" >expect2 &&
	cut -f1,3,4 actual >actual2 && test_cmp expect2 actual2 &&
	test "$(jq -r ".ports[0].neighbor.chassis_subtype" show.json)" = 4 &&
	test "$(jq -r ".ports[0].mtu" show.json)" = 1500 &&
	netns_exec b "$FABSCOPE" topo show -i "$HOSTIF" --listen 20 >text 2>err &&
	test_grep "^$HOSTIF: up, .*, MTU 1500: leaf-1 port $SW" text &&
	test_grep "listening for LLDP on 1 interface for up to 20 s" err
'

test_expect_success $P 'nothing heard where the other end sends no LLDP: said, within --listen' '
	lcli a pause &&
	sleep 1.5 &&
	netns_exec b "$FABSCOPE" topo show -i "$HOSTIF" --listen 1.5 >text 2>err &&
	test_grep "^$HOSTIF: up, .*: no LLDP heard in 1.5 s" text &&
	netns_exec b "$FABSCOPE" topo show -i "$HOSTIF" --listen 1 --json >none.json &&
	jq -e ".ports[0].neighbor == null" none.json >/dev/null &&
	test_expect_exit 3 netns_exec b "$FABSCOPE" topo show -i nosuch0 --listen 1 2>err &&
	test_grep "nosuch0" err
'

test_done
