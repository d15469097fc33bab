# Prints "TIME SCOPE.NAME VALUE" for every value change of a VCD (tests/reduction/fst_wave.sh).
$1 == "$scope" { scope[++depth] = $3; next }
$1 == "$upscope" { --depth; next }
$1 == "$var" {
  path = ""; for (i = 1; i <= depth; ++i) path = path scope[i] "."
  names[$4] = names[$4] " " path $5; next
}
/^#/ { time = substr($0, 2); next }
/^\$/ { next }
/^[01xz]/ { code = substr($0, 2); value = substr($0, 1, 1); n = split(names[code], list, " "); for (i = 1; i <= n; ++i) print time, list[i], value; next }
/^[br]/ { split($0, parts, " "); n = split(names[parts[2]], list, " "); for (i = 1; i <= n; ++i) print time, list[i], parts[1]; next }
