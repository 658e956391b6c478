#!/usr/bin/perl
# readme-check.pl -- what README.md and docs/*.md say about pathd's flags
# and tests holds (make test runs it):
#
#   perl tests/readme-check.pl build/pathd
#
# - Every --flag the documents name is one of pathd's (`pathd --help`), one
#   of pathd-bench's (its help text in loadtest/), or one of the few other
#   tools' options the README shows in commands (%other below).
# - Every default the README states for a pathd flag is the default --help
#   prints: "`--flag` ... default N", "`--flag` defaults to N" (in the same
#   sentence), "(PATHD_X, N)" and "PATHD_X; N, the default"; N may carry a unit (KiB, MiB and GiB are
#   multiplied out; s and ms are the flag's own unit).
# - The suite list ("One suite a module, ...", in docs/testing.md) names
#   every test suite (tests/test_<name>.c), in backquotes, and no other.
# Each finding is printed with its file and line; any fails the check.
use strict;
use warnings;

my $bin = shift @ARGV // 'build/pathd';
my (%default, %env_flag, %bench, @bad);
my $defaults_checked = 0;

open(my $h, '-|', $bin, '--help') or die "readme-check: cannot run $bin --help: $!\n";
while (<$h>) {
    next unless /^\s+--([a-z0-9-]+)(?:\s+[A-Z]+)?\s+(PATHD_[A-Z0-9_]+)\s+default\s+(\S+)/;
    $default{$1} = $3;
    $env_flag{$2} = $1;
}
close($h) or die "readme-check: $bin --help failed\n";
die "readme-check: no flags in $bin --help\n" unless %default;

for my $f (glob 'loadtest/*.c') {
    open(my $s, '<', $f) or die "readme-check: $f: $!\n";
    while (<$s>) { $bench{$1} = 1 while /(?<![\w-])--([a-z][a-z0-9-]+)/g; }
}
# Options of other programs in the documents' commands: curl, docker, npm, esbuild.
my %other = map { $_ => 1 } qw(data-binary cacert stop-timeout rm network user bundle minify format outfile);

my %unit = (KiB => 1024, MiB => 1024**2, GiB => 1024**3);
sub check_default {
    my ($flag, $num, $u, $n, $line) = @_;
    return unless exists $default{$flag};
    $defaults_checked++;
    my $want = $default{$flag};
    my $got = $num * ($u && $unit{$u} ? $unit{$u} : 1);
    push @bad, "$n: --$flag default $num" . ($u ? " $u" : '') .
        ", pathd --help says $want: $line" unless $want =~ /^-?\d+$/ && $want == $got;
}

my (@readme, @where);
for my $doc ('README.md', sort glob 'docs/*.md') {
    open(my $r, '<', $doc) or die "readme-check: $doc: $!\n";
    my $k = 0;
    while (my $l = <$r>) {
        push @readme, $l;
        push @where, "$doc line " . ++$k;
    }
    close($r);
}
die "readme-check: no docs/*.md\n" unless grep { /^docs\// } @where;
my $i = 0;
for my $line (@readme) {
    my $n = $where[$i++];
    chomp $line;
    while ($line =~ /(?<![\w-])--([a-z][a-z0-9-]+)/g) {
        my $f = $1;
        next if exists $default{$f} || $f eq 'help' || $bench{$f} || $other{$f};
        push @bad, "$n: --$f is not a pathd flag (pathd --help), nor pathd-bench's: $line";
    }
    # "`--flag`... default N" within one sentence, no other flag between.
    while ($line =~ /`--([a-z0-9-]+)[^`]*`([^.;`]{0,60}?)\bdefaults?(?: to| is)?\s+(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB|ms|s)?\b/g) {
        check_default($1, $3, $4, $n, $line);
    }
    while ($line =~ /\b(PATHD_[A-Z0-9_]+); (\d+), the default/g) {
        next unless exists $env_flag{$1};
        check_default($env_flag{$1}, $2, undef, $n, $line);
    }
    while ($line =~ /\b(PATHD_[A-Z0-9_]+), (\d+(?:\.\d+)?)\s*(KiB|MiB|GiB|ms|s)?\)/g) {
        next unless exists $env_flag{$1};
        check_default($env_flag{$1}, $2, $3, $n, $line);
    }
}

my $text = join("\n", @readme);
my (%suite, %listed);
for my $f (glob 'tests/test_*.c') {
    (my $s = $f) =~ s{tests/test_(.*)\.c}{$1};
    $suite{$s} = 1;
}
if ($text =~ /One suite a module, `tests\/test_<module>\.c`:(.*?)\n\n/s) {
    my $list = $1;
    $listed{$1} = 1 while $list =~ /`([a-z_0-9]+)`/g;
    for my $s (sort keys %listed) {
        push @bad, "the suite list names '$s', which has no tests/test_$s.c"
            unless $suite{$s};
    }
    for my $s (sort keys %suite) {
        push @bad, "tests/test_$s.c: the suite list (docs/testing.md) does not name '$s'"
            unless $listed{$s};
    }
} else {
    push @bad, "docs: no suite list (\"One suite a module, `tests/test_<module>.c`: ...\")";
}

print "not ok - $_\n" for @bad;
printf "readme-check: %d flags, %d stated defaults, %d suites: %s\n", scalar(keys %default),
    $defaults_checked, scalar(keys %suite),
    @bad ? scalar(@bad) . " false claims" : "the documents' flags, defaults and suites hold";
exit(@bad ? 1 : 0);
