-- wrk script: refreshes ID tokens as the SDKs do (POST /securetoken.googleapis.com/v1/token with
-- the API key and a form body grant_type=refresh_token&refresh_token=...), cycling through the
-- refresh tokens in a file, one a line (refresh tokens stay valid, so each is used again and again).
--
-- Arguments (after `--`): 1. the file; 2. the API key (default demo-api-key)
local next_thread = 0

function setup(thread)
   thread:set("thread_id", next_thread)
   next_thread = next_thread + 1
end

function init(args)
   key = args[2] or "demo-api-key"
   tokens = {}
   for line in io.lines(args[1]) do
      if #line > 0 then tokens[#tokens + 1] = line end
   end
   position = thread_id
   headers = { ["Content-Type"] = "application/x-www-form-urlencoded" }
end

function request()
   position = position % #tokens + 1
   local body = "grant_type=refresh_token&refresh_token=" .. tokens[position]
   return wrk.format("POST", "/securetoken.googleapis.com/v1/token?key=" .. key, headers, body)
end
