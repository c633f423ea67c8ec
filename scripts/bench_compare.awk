# bench_compare.awk PREVIOUS NOW: scripts/bench.sh's lines, each case (the
# text before a line's last ": ") with its figure now and before: the number
# before "ms wall" or "s wall" if the line has one, else the first number
# after the case.  A case only in one file is listed with "-".
function figure(line,    rest, m) {
  rest = substr(line, length(key(line)) + 3)
  if (match(rest, /[0-9.]+ m?s wall/)) {
    m = substr(rest, RSTART, RLENGTH)
    return m
  }
  if (match(rest, /[0-9.]+( ?[a-zA-Z%]+)?/))
    return substr(rest, RSTART, RLENGTH)
  return ""
}
function key(line,    i, k) {
  k = line
  i = 0
  while (match(substr(k, i + 1), /: /)) i += RSTART + 1
  return i > 0 ? substr(line, 1, i - 2) : ""
}
function num(f) { return f + 0 }
FNR == NR { if (key($0) != "") before[key($0)] = figure($0); next }
{
  k = key($0)
  if (k == "") next
  now = figure($0)
  was = (k in before) ? before[k] : "-"
  ratio = (k in before && num(was) > 0 && num(now) > 0) ? sprintf("%.2fx", num(now) / num(was)) : ""
  printf "  %-72.72s %12s  before %12s  %s\n", k, now, was, ratio
}
