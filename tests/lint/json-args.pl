#!/usr/bin/perl
# tests/lint/json-args.pl FILE.c... - every json_pack()/json_unpack() call whose format
# is a string literal is given as many values as its format asks for.  jansson reads
# them with va_arg: a value too many is dropped without a word (a client's qp_timeout
# never reached the server that way), one too few reads garbage.  Prints one line per
# mismatch, FILE:LINE: ..., and exits 1 if there is one.
use strict;
use warnings;

# the values a format takes: s b i I f F o O + one each (s# and s% two), n none;
# ? * ! : , and brackets none
sub wanted {
	my ($f) = @_;
	my $n = 0;
	while ($f =~ /([sbiIfFoO+])([#%]?)|n/g) {
		next unless defined $1;
		$n += $2 ? 2 : 1;
	}
	return $n;
}

# the top-level arguments of the call whose text starts after its '('
sub args {
	my ($t) = @_;
	my ($depth, $cur, @a) = (0, '');
	while ($t =~ /\G("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^"'(),\[\]{}]+|.)/gs) {
		my $tok = $1;
		if ($tok =~ /^[(\[{]$/) { $depth++; }
		elsif ($tok =~ /^[)\]}]$/) {
			if (!$depth) { push @a, $cur; return @a; }
			$depth--;
		} elsif ($tok eq ',' && !$depth) { push @a, $cur; $cur = ''; next; }
		$cur .= $tok;
	}
	return ();
}

my ($bad, $calls) = (0, 0);
for my $file (@ARGV) {
	open my $fh, '<', $file or die "json-args: cannot read $file: $!\n";
	my $src = do { local $/; <$fh> };
	# comments go (blanks in their place, lines kept, for the line numbers); string and
	# character literals are stepped over whole, so that "http://..." stays
	$src =~ s{("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|/\*.*?\*/|//[^\n]*}
		{ defined $1 ? $1 : ($& =~ s/[^\n]/ /gr) }gse;
	while ($src =~ /\bjson_(pack|unpack)\s*\(/g) {
		my ($kind, $at) = ($1, pos($src));
		my @a = map { s/^\s+|\s+$//gr } args(substr($src, $at));
		my $k = $kind eq 'pack' ? 0 : 1;	# json_unpack(json, fmt, ...)
		next unless @a > $k && $a[$k] =~ /^(?:"(?:[^"\\]|\\.)*"\s*)+$/;
		my $fmt = join '', $a[$k] =~ /"((?:[^"\\]|\\.)*)"/g;
		my ($want, $have) = (wanted($fmt), @a - $k - 1);
		$calls++;
		next if $want == $have;
		my $line = 1 + (substr($src, 0, $at) =~ tr/\n//);
		print "$file:$line: json_$kind(\"$fmt\") takes $want values, given $have\n";
		$bad++;
	}
}
print "json-args: $calls calls checked, $bad mismatched\n";
exit($bad ? 1 : 0);
