-- A command's password prompt answered in Neovim: the real server sends toolhost/secret and
-- the plugin's own handler asks through vim.fn.input (the user name) and
-- vim.fn.inputsecret (the password), both stubbed here with the user's typing, as the
-- approval tests stub vim.ui.select. TOOLHOST_TEST_MODE: "editor" (the bash call comes from
-- Neovim), "mcp" (an MCP agent attached to this Neovim makes it) or "cancel".
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

local mode = assert(os.getenv("TOOLHOST_TEST_MODE"))
local url = assert(os.getenv("TOOLHOST_TEST_GIT_URL"))

H.run(function()
  local toolhost = H.start({ policy = { mode = "default" }, settings = { shell = { sandbox_network = true } } })
  H.stub_ui({ "Allow once" })
  H.out.secret_prompts, H.out.name_prompts = {}, {}
  vim.fn.input = function(opts)
    table.insert(H.out.name_prompts, opts.prompt)
    return os.getenv("TOOLHOST_TEST_USER")
  end
  vim.fn.inputsecret = function(prompt)
    table.insert(H.out.secret_prompts, prompt)
    if mode == "cancel" then
      return "" -- Escape
    end
    return os.getenv("TOOLHOST_TEST_PASSWORD")
  end
  if mode == "mcp" then
    local done
    vim.system(vim.json.decode(assert(os.getenv("TOOLHOST_TEST_AGENT"))), { text = true }, function(out)
      done = out
    end)
    H.wait(function()
      return done ~= nil
    end, "the MCP agent", 180000)
    H.out.agent_code = done.code
    H.out.agent_stderr = done.stderr:sub(-3000)
    H.out.result = done.code == 0 and vim.json.decode(done.stdout) or vim.NIL
  else
    H.out.result = assert(toolhost.call_sync("bash", { command = "git clone " .. url }, 120000))
  end
  H.out.readme = vim.fn.filereadable(H.workspace .. "/repo/README.md") == 1
end)
