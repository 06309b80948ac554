-- wrk script: completes email-link sign-ins (POST /v1/accounts:signInWithEmailLink with the API
-- key), each with a different code from a file of "email code" lines that issue-and-record.lua wrote.
-- Every code is used once; when a thread runs out it sends an unknown code (a 400 that wrk counts
-- as non-2xx, so running out shows in the results).
--
-- Arguments (after `--`): 1. the file; 2. the API key (default demo-api-key)
local next_thread = 0
local threads = 0

function setup(thread)
   thread:set("thread_id", next_thread)
   next_thread = next_thread + 1
end

function init(args)
   local file = args[1]
   key = args[2] or "demo-api-key"
   lines = {}
   local index = 0
   for line in io.lines(file) do
      -- each thread takes every n-th line; wrk tells threads apart only by thread_id, so the
      -- thread count comes from the environment (WRK_THREADS, default 1)
      local count = tonumber(os.getenv("WRK_THREADS") or "1")
      if index % count == thread_id then lines[#lines + 1] = line end
      index = index + 1
   end
   position = 0
   headers = { ["Content-Type"] = "application/json" }
end

function request()
   position = position + 1
   local line = lines[position] or "nobody@example.com exhausted"
   local email, code = line:match("^(%S+) (%S+)$")
   local body = '{"email":"' .. email .. '","oobCode":"' .. code .. '"}'
   return wrk.format("POST", "/v1/accounts:signInWithEmailLink?key=" .. key, headers, body)
end
