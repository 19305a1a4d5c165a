" editors.vim.syntax: the groups of editors/vim/syntax/fly.vim on Fly text,
" read back with synID() as Vim highlights it, without a screen.
"
" Each case is [lines, expectations]. An expectation [text, group] finds text
" in the buffer after the previous expectation's match and checks that every
" byte of it is in the syntax group; group '' means no group at all.

" Checks the expectations of one case; a failure names the case's line.
function s:Check(lines, expectations) abort
  call FlyBuffer(a:lines)
  call cursor(1, 1)
  let flags = 'cW'
  for [text, group] in a:expectations
    let [lnum, col] = searchpos('\V' . escape(text, '\'), flags)
    if lnum == 0
      call assert_report(printf('%s: %s not found after the previous match', string(a:lines), string(text)))
      return
    endif
    let got = map(range(col, col + len(text) - 1), {_, c -> FlySynAt(lnum, c)})
    let wrong = filter(copy(got), {_, g -> g !=# group})
    if !empty(wrong)
      call assert_report(printf("line %d %s: %s should be %s, is %s",
            \ lnum, string(getline(lnum)), string(text), group ==# '' ? 'plain' : group,
            \ join(uniq(map(got, {_, g -> g ==# '' ? 'plain' : g})), ' and ')))
    endif
    call cursor(lnum, col + len(text) - 1)
    let flags = 'W'
  endfor
endfunction

function s:CheckAll(cases) abort
  for [lines, expectations] in a:cases
    call s:Check(lines, expectations)
  endfor
endfunction

function Test_declarations() abort
  call s:CheckAll([
        \ [['kernel vector_add(A: tensor<f32>, const BLOCK: int = 256) {', '}'],
        \  [['kernel', 'flyKeyword'], ['vector_add', 'flyFunctionName'], ['A', ''], [':', ''],
        \   ['tensor', 'flyTypeConstructor'], ['f32', 'flyType'], ['const', 'flyStorageClass'],
        \   ['BLOCK', ''], [':', ''], ['int', 'flyType'], ['256', 'flyNumber']]],
        \ [['fn row_major(m, n) -> layout {', '    (m, n):(n, 1)', '}'],
        \  [['fn', 'flyKeyword'], ['row_major', 'flyFunctionName'], ['m', ''], ['->', ''],
        \   ['layout', 'flyType']]],
        \ [['launch vector_add {', '    grid = ceil_div(size(A), BLOCK * VEC);', '    block = BLOCK;', '}'],
        \  [['launch', 'flyKeyword'], ['vector_add', 'flyFunctionName'], ['grid', 'flyLaunchField'],
        \   ['ceil_div', 'flyBuiltinFunction'], ['size', 'flyBuiltinFunction'], ['block', 'flyLaunchField']]],
        \ [['launch rows { let blocks = ceil_div(n, 4); grid = blocks; block = (THREADS, 4); shared = 0; }'],
        \  [['blocks', ''], ['grid', 'flyLaunchField'], ['blocks', ''], ['block', 'flyLaunchField'],
        \   ['shared', 'flyLaunchField']]],
        \ [['let block = 4;', 'let x = f(a, block = 3, grid = 2);', 'let y = grid == 1;'],
        \  [['block', ''], ['block', ''], ['grid', ''], ['grid', '']]],
        \ [['kernel', '    split_rows(X: tensor<f32>) {}'],
        \  [['kernel', 'flyKeyword'], ['split_rows', 'flyFunctionName'], ['X', '']]],
        \ [['fn size(x) { x }', 'fn copy_tile(tc, src, dst) {', '    copy_tile(tc, src, dst);', '}'],
        \  [['size', 'flyFunctionName'], ['copy_tile', 'flyFunctionName'], ['copy_tile', '']]],
        \ [['const THREADS = WARPS_M * warp_size;'],
        \  [['const', 'flyStorageClass'], ['THREADS', ''], ['WARPS_M', ''], ['warp_size', 'flyBuiltinValue']]],
        \ [['static_assert(BM % 16 == 0, "BM must be a multiple of 16");'],
        \  [['static_assert', 'flyKeyword'], ['BM', ''], ['16', 'flyNumber'],
        \   ['"BM must be a multiple of 16"', 'flyString'], [');', '']]],
        \ [['const { static_assert(true); }'],
        \  [['const', 'flyStorageClass'], ['static_assert', 'flyKeyword'], ['true', 'flyBoolean']]],
        \ ])
endfunction

function Test_statements() abort
  call s:CheckAll([
        \ [['for k in range(0, K / BK) carry (acc = zeros_like(rC)) {'],
        \  [['for', 'flyRepeat'], ['k', ''], ['in', 'flyRepeat'], ['range', 'flyBuiltinFunction'],
        \   ['0', 'flyNumber'], ['K', ''], ['carry', 'flyRepeat'], ['acc', ''],
        \   ['zeros_like', 'flyBuiltinFunction'], ['rC', '']]],
        \ [['    yield (m2, s * exp(m - m2));'],
        \  [['yield', 'flyStatement'], ['m2', ''], ['exp', 'flyBuiltinFunction']]],
        \ [['let atom = if const target.vendor == "nvidia" { a } else if x { b } else { c };'],
        \  [['let', 'flyStatement'], ['atom', ''], ['if', 'flyConditional'], ['const', 'flyStorageClass'],
        \   ['target', 'flyBuiltinValue'], ['.vendor', ''], ['"nvidia"', 'flyString'],
        \   ['else', 'flyConditional'], ['if', 'flyConditional'], ['else', 'flyConditional']]],
        \ [['while i < n carry (i = 0) {', '    if i == 3 { break; } else { continue; }'],
        \  [['while', 'flyRepeat'], ['i', ''], ['carry', 'flyRepeat'], ['if', 'flyConditional'],
        \   ['break', 'flyStatement'], ['else', 'flyConditional'], ['continue', 'flyStatement']]],
        \ [['if thread_idx.x != 0 { return; }', 'return b;'],
        \  [['thread_idx', 'flyBuiltinValue'], ['.x', ''], ['return', 'flyStatement'], ['return', 'flyStatement']]],
        \ [['import std.reduce;', 'import "lib/tiles.fly";'],
        \  [['import', 'flyInclude'], ['std.reduce;', ''], ['import', 'flyInclude'], ['"lib/tiles.fly"', 'flyString']]],
        \ [['let s = -x as f16;', 'let t = (x as i32) * 2;'],
        \  [['as', 'flyOperatorKeyword'], ['f16', 'flyType'], ['as', 'flyOperatorKeyword'], ['i32', 'flyType']]],
        \ ])
endfunction

function Test_builtins() abort
  call s:CheckAll([
        \ [['let i = block_idx.x * block_dim.x + thread_idx.y + grid_dim.z;'],
        \  [['block_idx', 'flyBuiltinValue'], ['.x', ''], ['block_dim', 'flyBuiltinValue'],
        \   ['thread_idx', 'flyBuiltinValue'], ['.y', ''], ['grid_dim', 'flyBuiltinValue']]],
        \ [['let y = shuffle(x, (lane + 1) % warp_size);', 'let l = p.lane;'],
        \  [['shuffle', 'flyBuiltinFunction'], ['lane', 'flyBuiltinValue'], ['warp_size', 'flyBuiltinValue'],
        \   ['p.lane', '']]],
        \ [['let shape = (M, (4, 8));', 'let (M, N) = shape(S);', 'let s = size (t);'],
        \  [['shape', ''], ['shape', 'flyBuiltinFunction'], ['size', 'flyBuiltinFunction']]],
        \ [['rC.store(rA.load() + rB.load());', 'let tCsA = thr.partition_A(sA);'],
        \  [['rC.', ''], ['store', 'flyBuiltinFunction'], ['rA.', ''], ['load', 'flyBuiltinFunction'],
        \   ['thr.', ''], ['partition_A', 'flyBuiltinFunction']]],
        \ [['let a = mma_atom(nv.mma_sync_16x8x16, f16, f32);', 'let b = mma_atom(amd.mfma_16x16x16, bf16, f32);'],
        \  [['mma_atom', 'flyBuiltinFunction'], ['nv', 'flyBuiltinValue'], ['.', ''],
        \   ['mma_sync_16x8x16', 'flyAtom'], ['f16', 'flyType'], ['amd', 'flyBuiltinValue'],
        \   ['mfma_16x16x16', 'flyAtom'], ['bf16', 'flyType']]],
        \ [['let sized = size_of(x); let t = tiled_copy(atom, 4:1, 1:1);'],
        \  [['size_of', ''], ['tiled_copy', 'flyBuiltinFunction']]],
        \ ])
endfunction

function Test_numbers() abort
  call s:CheckAll([
        \ [['let a = 1_000_000 + 0xFFFF_FFFF + 0xff + 0b1010_0101 + 18446744073709551615 + 007;'],
        \  [['1_000_000', 'flyNumber'], ['0xFFFF_FFFF', 'flyNumber'], ['0xff', 'flyNumber'],
        \   ['0b1010_0101', 'flyNumber'], ['18446744073709551615', 'flyNumber'], ['007', 'flyNumber']]],
        \ [['let f = 1.0 + 0.5 + 1e-3 + 2.5E+10 + 6.022_140e23 + 1e5;'],
        \  [['1.0', 'flyFloat'], ['0.5', 'flyFloat'], ['1e-3', 'flyFloat'], ['2.5E+10', 'flyFloat'],
        \   ['6.022_140e23', 'flyFloat'], ['1e5', 'flyFloat']]],
        \ [['let f8x = tile_M2 + f32_to_f16(x1);'],
        \  [['f8x', ''], ['tile_M2', ''], ['f32_to_f16', ''], ['x1', '']]],
        \ [['const N = 10u + 1_ + 0b102 + 0x + 0.5f + 0X1F;'],
        \  [['10u', 'flyNumberError'], ['1_', 'flyNumberError'], ['0b102', 'flyNumberError'],
        \   ['0x', 'flyNumberError'], ['0', 'flyNumber'], ['5f', 'flyNumberError'], ['0X1F', 'flyNumberError']]],
        \ ])
endfunction

function Test_strings() abort
  call s:CheckAll([
        \ [['printf("tab\there, quote \" and backslash \\\n");'],
        \  [['printf', 'flyBuiltinFunction'], ['"tab', 'flyString'], ['\t', 'flyEscape'],
        \   ['here, quote ', 'flyString'], ['\"', 'flyEscape'], [' and backslash ', 'flyString'],
        \   ['\\', 'flyEscape'], ['\n', 'flyEscape'], ['"', 'flyString'], [');', '']]],
        \ [['printf("\x41\u{42}\u{1F600}\0\r");'],
        \  [['\x41', 'flyEscape'], ['\u{42}', 'flyEscape'], ['\u{1F600}', 'flyEscape'],
        \   ['\0', 'flyEscape'], ['\r', 'flyEscape']]],
        \ [['const S = "\xE9 \q \u{}";'],
        \  [['\x', 'flyEscapeError'], ['E9 ', 'flyString'], ['\q', 'flyEscapeError'], ['\u', 'flyEscapeError']]],
        \ [['let s = "// not a comment /* nor this, kernel 8:1 ?";', 'fn after() {}'],
        \  [['"// not a comment /* nor this, kernel 8:1 ?"', 'flyString'], [';', ''], ['fn', 'flyKeyword']]],
        \ [['const S = "first line', 'second line";'],
        \  [['"first line', 'flyString'], ['second', '']]],
        \ [['printf("Grüße, %s\n", "κόσμε");'],
        \  [['"Grüße, %s', 'flyString'], ['\n', 'flyEscape'], ['"κόσμε"', 'flyString'], [');', '']]],
        \ ])
endfunction

function Test_comments() abort
  call s:CheckAll([
        \ [['// A line comment with TODO inside and a kernel fn 8:1 "quote'],
        \  [['// A line comment with ', 'flyLineComment'], ['TODO', 'flyTodo'],
        \   [' inside and a kernel fn 8:1 "quote', 'flyLineComment']]],
        \ [['let tile = BLOCK * VEC;    // compile time: folded, FIXME', 'let x = 1;'],
        \  [['BLOCK', ''], ['// compile time: folded, ', 'flyLineComment'], ['FIXME', 'flyTodo'], ['let', 'flyStatement']]],
        \ [['fn answer() -> i32 { 42 /* between any two tokens */ }'],
        \  [['42', 'flyNumber'], ['/* between any two tokens */', 'flyBlockComment'], ['}', '']]],
        \ [['/* A block comment /* with another one inside */', '   ends where the outer comment closes. XXX */', 'fn after() {}'],
        \  [['/* A block comment /* with another one inside */', 'flyBlockComment'],
        \   ['   ends where the outer comment closes. ', 'flyBlockComment'], ['XXX', 'flyTodo'],
        \   [' */', 'flyBlockComment'], ['fn', 'flyKeyword'], ['after', 'flyFunctionName']]],
        \ [['// a /* in a line comment opens nothing', 'fn g() {}'],
        \  [['/*', 'flyLineComment'], ['fn', 'flyKeyword']]],
        \ [['/* a "quote in a comment */ kernel k() {}', '/* // */ let'],
        \  [['"quote', 'flyBlockComment'], ['kernel', 'flyKeyword'], ['// */', 'flyBlockComment'], ['let', 'flyStatement']]],
        \ [['/*', ' * NOTE: stars', ' */'],
        \  [['/*', 'flyBlockComment'], [' * ', 'flyBlockComment'], ['NOTE', 'flyTodo'], [': stars', 'flyBlockComment']]],
        \ ])
endfunction

function Test_refused_characters() abort
  call s:CheckAll([
        \ [["let c = 'a'; let d = a @ b; let e = #x; let f = $y; let g = `z`; let h = \\q;"],
        \  [["'a'", 'flyStrayError'], ['@', 'flyStrayError'], ['#', 'flyStrayError'], ['$', 'flyStrayError'],
        \   ['`', 'flyStrayError'], ['`', 'flyStrayError'], ['\', 'flyStrayError']]],
        \ [["printf(\"it's #1 @ $5 `x` \\\\\"); // it's #1 @ $5"],
        \  [["\"it's #1 @ $5 `x` ", 'flyString'], ['\\', 'flyEscape'], ["// it's #1 @ $5", 'flyLineComment']]],
        \ ])
endfunction

function Test_layouts() abort
  call s:CheckAll([
        \ [['let b = (8, 16):(1, 8);'],
        \  [['(', ''], ['8', 'flyNumber'], [', ', ''], ['16', 'flyNumber'], [')', ''],
        \   [':', 'flyLayoutOperator'], ['(', ''], ['1', 'flyNumber'], ['8', 'flyNumber'], [');', '']]],
        \ [['let g = logical_divide(A, tile:1)[_, block_idx.x];'],
        \  [['logical_divide', 'flyBuiltinFunction'], ['tile', ''], [':', 'flyLayoutOperator'],
        \   ['1', 'flyNumber'], ['_', 'flyUnderscore'], ['block_idx', 'flyBuiltinValue']]],
        \ [['kernel k(B: tensor<f16, (?, ?):(?, 1)>, C: tensor<f32, (?, 128):(128, 1), align = 16>) {}'],
        \  [['B', ''], [':', ''], ['?', 'flyUnknown'], ['?', 'flyUnknown'], [':', 'flyLayoutOperator'],
        \   ['?', 'flyUnknown'], ['C', ''], [':', ''], ['128', 'flyNumber'], [':', 'flyLayoutOperator'],
        \   ['align', ''], ['16', 'flyNumber']]],
        \ [['let c = (4, (2, 2)):(2, (1, 8)); let d = ((4,2)):((1,4));'],
        \  [['4', 'flyNumber'], [':', 'flyLayoutOperator'], ['1', 'flyNumber'],
        \   ['((', ''], [':', 'flyLayoutOperator'], ['((', '']]],
        \ [['let e = BLOCK * VEC : 1; let f = (8, 4):(-1, 0); let s = smem<f16>((64, K):(K, 1));'],
        \  [[':', 'flyLayoutOperator'], [':', 'flyLayoutOperator'], ['smem', 'flyTypeConstructor'],
        \   [':', 'flyLayoutOperator']]],
        \ [['let h: layout = (8, 8):(8, 1);', 'let p: (i32, (f32, layout)) = (n, (scale, h));', 'let v: vec<4, f32> = x;'],
        \  [[':', ''], ['layout', 'flyType'], [':', 'flyLayoutOperator'], [':', ''], [':', '']]],
        \ [['fn tile_sum(t: smem<f32, (8, 8):(8, 1)>, r: rmem<f32, 8:1>) -> (f32, f32) {', '}'],
        \  [['tile_sum', 'flyFunctionName'], ['(t', ''], [':', ''], [':', 'flyLayoutOperator'], [', r', ''],
        \   [':', ''], [':', 'flyLayoutOperator']]],
        \ [['let (q, _) = (tile_M2, 0); let gS = S[(_, _), (block_idx.y, _)]; let _scale = 2;'],
        \  [['_', 'flyUnderscore'], ['tile_M2', ''], ['_', 'flyUnderscore'], ['_', 'flyUnderscore'],
        \   ['.y, ', ''], ['_', 'flyUnderscore'], ['_scale', '']]],
        \ ])
endfunction

" Every group links to the standard group a colour scheme knows.
function Test_links() abort
  call FlyBuffer(['fn f() {}'])
  let links = {
        \ 'flyKeyword': 'Keyword', 'flyStorageClass': 'StorageClass', 'flyStatement': 'Statement',
        \ 'flyConditional': 'Conditional', 'flyRepeat': 'Repeat', 'flyInclude': 'Include',
        \ 'flyOperatorKeyword': 'Operator', 'flyFunctionName': 'Function', 'flyBoolean': 'Boolean',
        \ 'flyType': 'Type', 'flyTypeConstructor': 'Type', 'flyBuiltinValue': 'Constant',
        \ 'flyAtom': 'Constant', 'flyBuiltinFunction': 'Function', 'flyLayoutOperator': 'Operator',
        \ 'flyUnknown': 'Special', 'flyUnderscore': 'Special', 'flyNumberError': 'Error',
        \ 'flyNumber': 'Number', 'flyFloat': 'Float', 'flyString': 'String', 'flyEscape': 'SpecialChar',
        \ 'flyEscapeError': 'Error', 'flyStrayError': 'Error', 'flyLaunchField': 'Identifier',
        \ 'flyTodo': 'Todo', 'flyLineComment': 'Comment',
        \ 'flyBlockComment': 'Comment'}
  for [group, link] in items(links)
    call assert_equal(link, FlyLink(group), group . ' links to')
  endfor
  " No group of the syntax file is left out of the table.
  let defined = uniq(sort(map(filter(split(execute('syntax list'), "\n"), {_, l -> l =~# '^fly'}),
        \ {_, l -> matchstr(l, '^\w\+')})))
  call assert_equal(sort(keys(links)), defined)
endfunction

" The project's Fly files, all valid, hold nothing the syntax file calls an
" error.
function Test_no_errors_in_the_project_files() abort
  for file in glob(FlySource('examples') . '/*.fly', 0, 1) + glob(FlySource('stdlib') . '/**/*.fly', 0, 1)
        \ + glob(FlySource('tests/cli/compile/golden') . '/*.fly', 0, 1)
        \ + glob(FlySource('kernels') . '/**/*.fly', 0, 1)
    execute 'edit' fnameescape(file)
    for lnum in range(1, line('$'))
      for col in range(1, len(getline(lnum)))
        if FlySynAt(lnum, col) =~# 'Error$'
          call assert_report(printf('%s:%d:%d: %s in %s', file, lnum, col, FlySynAt(lnum, col), getline(lnum)))
          break
        endif
      endfor
    endfor
  endfor
endfunction
