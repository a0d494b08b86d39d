-- wrk script: every request pings one of the tokens in $TOKENS_FILE, chosen at random,
-- so the server sees 10,000 distinct ping URLs (distinct monitors, rate limits, rows).
local tokens = {}
for line in io.lines(os.getenv("TOKENS_FILE")) do
  tokens[#tokens + 1] = line
end
math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 1000)

request = function()
  return wrk.format("GET", "/ping/" .. tokens[math.random(#tokens)])
end
