#!/usr/bin/env bash
test_description='the sources: every json_pack/json_unpack call is given as many values as its
format asks for (jansson drops a value too many without a word: the client'"'"'s --qp-timeout
never reached the server that way)'
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'the checker finds a value too many, and one too few; a URL in a string is no comment' '
	cat >bad.c <<-\EOF &&
	static json_t *f(int a, int b)
	{
		json_t *j = json_pack("{s:i, s:i}", "a", a, "b", b, "c", 3);
		/* a comment, with commas, ( and ) */
		json_unpack(j, "{s:i, s?I}", "a", &a);
		return json_pack("{s:s#, s:n}", "x", "xy", "y");
	}
	static json_t *g(void) { return json_pack("{s:s, s:i}", "url", "http://a,b/*", "n", 1); } /* ok */
	EOF
	test_must_fail perl "$SRCDIR/tests/lint/json-args.pl" bad.c >out &&
	cat out &&
	grep -q "^bad.c:3: .* takes 4 values, given 6" out &&
	grep -q "^bad.c:5: .* takes 4 values, given 2" out &&
	grep -q "^bad.c:6: .* takes 4 values, given 3" out &&
	grep -q "4 calls checked, 3 mismatched" out
'

test_expect_success 'every call in the sources matches its format' '
	{
		(cd "$SRCDIR" && find . -name "*.c" -not -path "./tests/trash*" -not -path "./build-*" |
			sort | xargs perl tests/lint/json-args.pl) >out ||
			{ cat out; false; }
	} &&
	cat out &&
	grep -qE "json-args: [0-9]{3,} calls checked, 0 mismatched" out
'

test_done
