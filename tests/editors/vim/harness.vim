" The test harness of tests/editors/vim, sourced by run-vim.sh in a headless
" Vim. It puts editors/vim ($FLY_VIM_RUNTIME) first in 'runtimepath', turns
" on filetype detection, plugins, indentation and syntax as a user's vimrc
" would, sources the test script $FLY_VIM_TEST and calls each of its Test_*
" functions in turn, each with fresh buffers. A test fails on a failed
" assert_*() (v:errors) and on any Vim error it raises. The results go to
" $FLY_VIM_LOG, one line per test and a last line PASS or FAIL; Vim then
" exits with 0 or 1.

let s:log = []

" Only the plugin under test and Vim's own runtime: nothing from ~/.vim.
let &runtimepath = escape($FLY_VIM_RUNTIME, '\,') . ',' . escape($VIMRUNTIME, '\,')
filetype plugin indent on
syntax on

" The path of a file of the source tree, by its path relative to the root.
function FlySource(path) abort
  return $FLY_SOURCE_DIR . '/' . a:path
endfunction

" The syntax group at line lnum, byte column col: 'flyKeyword', or '' for
" text that no group highlights.
function FlySynAt(lnum, col) abort
  return synIDattr(synID(a:lnum, a:col, 1), 'name')
endfunction

" The highlight group that group links to directly ('Keyword' for
" flyKeyword), or '' when it links to none.
function FlyLink(group) abort
  return matchstr(execute('highlight ' . a:group), 'links to \zs\w\+')
endfunction

" A new buffer of filetype fly holding lines.
function FlyBuffer(lines) abort
  enew!
  setfiletype fly
  call setline(1, a:lines)
endfunction

" An assert's message starts with the calls that led to it, "command
" line..script ...harness.vim[64]..function <SNR>1_Run[3]..Test_x line 2: ":
" keep the last function and the line.
function s:Shorten(error) abort
  let at = match(a:error, ' line \d\+: ')
  if a:error =~# '^Vim error: ' || at < 0
    return a:error
  endif
  let calls = strpart(a:error, 0, at)
  return matchstr(calls, '\%(.*\.\.\)\=\zs.*') . strpart(a:error, at)
endfunction

" Runs one test function; returns its errors.
function s:Run(name) abort
  let v:errors = []
  try
    call call(a:name, [])
  catch
    call add(v:errors, 'Vim error: ' . v:exception . ' (' . v:throwpoint . ')')
  endtry
  let errors = copy(v:errors)
  silent! %bwipeout!
  return errors
endfunction

let s:failed = 0
try
  execute 'source' fnameescape($FLY_VIM_TEST)
  let s:tests = sort(map(split(execute('function /^Test_'), "\n"),
        \ {_, line -> matchstr(line, '^function \zs\w\+')}))
  if empty(s:tests)
    call add(s:log, 'no Test_ function in ' . $FLY_VIM_TEST)
    let s:failed += 1
  endif
  for s:name in s:tests
    let s:errors = s:Run(s:name)
    call add(s:log, (empty(s:errors) ? 'ok   ' : 'FAIL ') . s:name)
    for s:error in s:errors
      call extend(s:log, map(split(s:Shorten(s:error), "\n"), {_, l -> '       ' . l}))
    endfor
    let s:failed += !empty(s:errors)
  endfor
  call add(s:log, s:failed ? 'FAIL: ' . s:failed . ' of ' . len(s:tests) . ' tests failed'
        \ : 'PASS: ' . len(s:tests) . ' tests')
catch
  call add(s:log, 'Vim error: ' . v:exception . ' (' . v:throwpoint . ')')
  call add(s:log, 'FAIL')
  let s:failed = 1
endtry

call writefile(s:log, $FLY_VIM_LOG)
if s:failed
  cquit!
endif
qall!
