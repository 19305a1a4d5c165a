" editors.vim.indent: editors/vim/indent/fly.vim gives back the indentation
" of the project's own Fly code. Each file is stripped of its indentation, or
" given a wrong one, re-indented with gg=G and compared line for line with
" the original; the same for the hand-written cases below, which hold what
" the files do not (block comments, continued statements), and for code typed
" in Insert mode.

" The files whose indentation is the reference: the examples, the standard
" library, the compiler's golden tests and the kernel library, once there.
function s:Corpus() abort
  let files = glob(FlySource('examples') . '/*.fly', 0, 1)
        \ + glob(FlySource('stdlib') . '/**/*.fly', 0, 1)
        \ + glob(FlySource('tests/cli/compile/golden') . '/*.fly', 0, 1)
        \ + glob(FlySource('kernels') . '/**/*.fly', 0, 1)
  call assert_true(len(files) >= 4, 'fewer than 4 .fly files under ' . $FLY_SOURCE_DIR)
  return files
endfunction

" Re-indents the buffer with gg=G, from the lines given the indentation
" Wrong(lnum); fails with the lines that then differ from want. The lines
" numbered in kept are to keep the indentation they were given.
function s:Reindent(what, want, Wrong, kept = []) abort
  let given = map(copy(a:want), {i, l -> l =~# '^\s*$' ? l : a:Wrong(i + 1) . trim(l)})
  " A kept indentation comes back as spaces of the same width ('expandtab').
  let want = map(copy(a:want), {i, l -> index(a:kept, i + 1) < 0 ? l
        \ : repeat(' ', strdisplaywidth(matchstr(given[i], '^\s*'))) . trim(l)})
  call setline(1, given)
  normal! gg=G
  let got = getline(1, '$')
  let diffs = []
  for i in range(len(want))
    if got[i] !=# want[i]
      call add(diffs, printf('%s:%d: want %s', a:what, i + 1, string(want[i])))
      call add(diffs, printf('%s:%d: got  %s', a:what, i + 1, string(got[i])))
    endif
  endfor
  if !empty(diffs)
    call assert_report("gg=G changed the indentation:\n  " . join(diffs[:19], "\n  ")
          \ . (len(diffs) > 20 ? "\n  ..." : ''))
  endif
endfunction

function s:Flush(lnum) abort
  return ''
endfunction

" Spaces and tabs, too many or too few, different on every line.
function s:Scrambled(lnum) abort
  return repeat(' ', (a:lnum * 7) % 13) . repeat("\t", a:lnum % 3)
endfunction

function Test_corpus_from_flush_left() abort
  for file in s:Corpus()
    " A scratch copy: the files themselves are never touched.
    let lines = readfile(file)
    call FlyBuffer(lines)
    call s:Reindent(file[len($FLY_SOURCE_DIR) + 1 :], lines, function('s:Flush'))
  endfor
endfunction

function Test_corpus_from_scrambled() abort
  for file in s:Corpus()
    " A scratch copy: the files themselves are never touched.
    let lines = readfile(file)
    call FlyBuffer(lines)
    call s:Reindent(file[len($FLY_SOURCE_DIR) + 1 :], lines, function('s:Scrambled'))
  endfor
endfunction

" Re-indents text, a hand-written case, both ways; the lines numbered in kept
" keep the indentation they are given.
function s:Case(name, text, kept = []) abort
  call FlyBuffer(a:text)
  call s:Reindent(a:name, a:text, function('s:Flush'), a:kept)
  call FlyBuffer(a:text)
  call s:Reindent(a:name, a:text, function('s:Scrambled'), a:kept)
endfunction

" A line in a block comment that starts with '*' lines up under the '*' of
" the innermost open '/*'; any other keeps its indentation, since it may be
" commented-out code.
function Test_block_comments() abort
  call s:Case('block comments', [
        \ '/* A block comment',
        \ '   keeps the indentation of its lines,',
        \ ' * but a star lines up under the star,',
        \ ' */',
        \ 'fn f() {',
        \ '    /* inside a block',
        \ '     * with stars',
        \ '     */',
        \ '    let x = 1; /* after code ( */',
        \ '    let y = x; /* Größe ∑ [ */',
        \ '    /*',
        \ '    let z = foo(a,',
        \ '                b);',
        \ '     */',
        \ '    /* outer /* inner { [ */',
        \ '     * still in outer',
        \ '     */',
        \ '    x',
        \ '}',
        \ ], [2, 12, 13])
endfunction

function Test_continued_statements() abort
  call s:Case('continued statements', [
        \ 'const TOTAL = 1 +',
        \ '    2;',
        \ 'fn f(a, b) {',
        \ '    let x = a +',
        \ '        b;',
        \ '    let y = a',
        \ '        * b;',
        \ '    let w =',
        \ '        a as',
        \ '        f32;',
        \ '    let z = foo(a,',
        \ '                b)',
        \ '        .load();',
        \ '    let p = make_layout(',
        \ '        (8, 4),',
        \ '        (1, 8)',
        \ '    );',
        \ '    for i in range(0, 8)',
        \ '        carry (acc = 0) {',
        \ '        yield acc + i;',
        \ '    }',
        \ '    let t = A[thread_idx.x,',
        \ '              _];',
        \ '    let q = if a > b {',
        \ '        a',
        \ '    } else if a < b {',
        \ '        b',
        \ '    }',
        \ '    else {',
        \ '        0',
        \ '    };',
        \ '    x + y',
        \ '}',
        \ 'fn g() -> layout',
        \ '{',
        \ '    (8, 4)',
        \ '        :(1, 8)',
        \ '}',
        \ ])
endfunction

function Test_brackets_in_strings_and_comments() abort
  call s:Case('strings and comments', [
        \ 'fn h(x) {',
        \ '    printf("(%d [\n", x);    // ( [ {',
        \ '    let s = "{";',
        \ '    let t = "\"(";',
        \ '    // let u = (',
        \ '    let v = "// (";',
        \ '    x',
        \ '}',
        \ ])
endfunction

" Typing: each new line starts at its indent, and '}' goes back as typed.
function Test_typing() abort
  call FlyBuffer([''])
  execute "normal! ikernel k(A: tensor<f32>,\<CR>const N: int = 4) {\<CR>"
        \ . "for i in range(0, N) {\<CR>A[i].store(0.0);\<CR>}\<CR>"
        \ . "let v = if N > 2 {\<CR>1\<CR>} else {\<CR>2\<CR>};\<CR>}"
  call assert_equal([
        \ 'kernel k(A: tensor<f32>,',
        \ '         const N: int = 4) {',
        \ '    for i in range(0, N) {',
        \ '        A[i].store(0.0);',
        \ '    }',
        \ '    let v = if N > 2 {',
        \ '        1',
        \ '    } else {',
        \ '        2',
        \ '    };',
        \ '}',
        \ ], getline(1, '$'))
endfunction

" The indent follows 'shiftwidth'.
function Test_shiftwidth() abort
  call FlyBuffer(['fn f(c) {', 'if c {', 'return;', '}', '}'])
  setlocal shiftwidth=2
  normal! gg=G
  call assert_equal(['fn f(c) {', '  if c {', '    return;', '  }', '}'], getline(1, '$'))
endfunction
