-- wrk script: POST /v1/accounts:signInWithPassword with the API key, cycling through accounts
-- <prefix>-0 ... <prefix>-<count-1>@example.com that all have the password given (scripts/bench.sh
-- creates them). Each sign-in verifies an scrypt hash with the default cost.
--
-- Arguments (after `--`): 1. how many accounts (default 16); 2. the address prefix (default
-- bench-signin); 3. the password (default bench-password-1); 4. the API key (default demo-api-key)
local next_thread = 0

function setup(thread)
   thread:set("thread_id", next_thread)
   next_thread = next_thread + 1
end

function init(args)
   count = tonumber(args[1] or "16")
   prefix = args[2] or "bench-signin"
   password = args[3] or "bench-password-1"
   key = args[4] or "demo-api-key"
   counter = thread_id * 7
   headers = { ["Content-Type"] = "application/json" }
end

function request()
   counter = counter + 1
   local body = string.format('{"email":"%s-%d@example.com","password":"%s","returnSecureToken":true}', prefix, counter % count, password)
   return wrk.format("POST", "/v1/accounts:signInWithPassword?key=" .. key, headers, body)
end
