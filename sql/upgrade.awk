# Assembles the upgrade script to version `version` from the files named
# on the command line, in that order (see sql/upgrade/00_begin.sql): a file
# under sql/upgrade/ whole, and of a file under sql/parts/ only its blocks
# "-- @since <version>" ... "-- @end" and "-- @always" ... "-- @end".
FNR == 1 {
	whole = (FILENAME ~ /(^|\/)upgrade\//)
	inblock = 0
	if (!whole)
		header = "\n-- from " FILENAME "\n"
}
whole { print; next }
/^-- @end[ \t]*$/ { inblock = 0; next }
$0 == "-- @since " version || /^-- @always[ \t]*$/ {
	inblock = 1
	if (header != "") { printf "%s", header; header = "" }
	next
}
/^-- @(since|always|end)/ { next }
inblock { print }
