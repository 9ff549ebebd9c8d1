-- Driven by tests/lsp/test_neovim.py: Neovim starts `ms-migrate lsp` for a torch
-- file, waits for its diagnostics, applies the "Convert this file to MindSpore"
-- code action, writes the buffer and quits. What it saw goes to $MS_MIGRATE_LSP_OUT
-- (JSON); a failure exits non-zero with the reason there.
local out_path = os.getenv("MS_MIGRATE_LSP_OUT")
local file = os.getenv("MS_MIGRATE_LSP_FILE")
local cmd = vim.fn.json_decode(os.getenv("MS_MIGRATE_LSP_CMD"))
local wait_ms = tonumber(os.getenv("MS_MIGRATE_LSP_WAIT_MS") or "300000")
local seen = { nvim = tostring(vim.version().major) .. "." .. tostring(vim.version().minor) }

local function finish(code, reason)
  seen.error = reason
  local handle = io.open(out_path, "w")
  handle:write(vim.fn.json_encode(seen))
  handle:close()
  vim.cmd((code == 0) and "qall!" or "cquit! " .. code)
end

vim.cmd("edit " .. vim.fn.fnameescape(file))
local bufnr = vim.api.nvim_get_current_buf()
local config = {
  name = "ms-migrate",
  cmd = cmd,
  root_dir = vim.fn.fnamemodify(file, ":p:h"),
  init_options = { debounce = 0.05 },
}
local client_id
if vim.lsp.start then -- Neovim 0.8 and later
  client_id = vim.lsp.start(config)
else -- Neovim 0.7 (Debian bookworm's)
  client_id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(bufnr, client_id)
end
if not client_id then
  return finish(2, "the language server did not start")
end

local got = vim.wait(wait_ms, function()
  return #vim.diagnostic.get(bufnr) > 0
end, 50)
if not got then
  return finish(3, "no diagnostics within " .. wait_ms .. " ms")
end
seen.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  table.insert(seen.diagnostics, {
    lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    severity = d.severity, message = d.message, code = code,
  })
end

local client = vim.lsp.get_client_by_id(client_id)
local params = vim.lsp.util.make_range_params()
params.context = { diagnostics = {} }
local response = client.request_sync("textDocument/codeAction", params, wait_ms, bufnr)
if not response or response.err then
  return finish(4, "codeAction failed: " .. vim.inspect(response and response.err))
end
seen.actions = {}
local convert
for _, action in ipairs(response.result or {}) do
  table.insert(seen.actions, action.title)
  if action.title == "Convert this file to MindSpore" then
    convert = action
  end
end
if not convert or not convert.edit then
  return finish(5, "no convert action with an edit")
end
vim.lsp.util.apply_workspace_edit(convert.edit, client.offset_encoding)
vim.cmd("write")
finish(0, nil)
