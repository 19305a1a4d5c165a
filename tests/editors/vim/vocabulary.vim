" editors.vim.vocabulary: every word `flyc vocabulary` prints gets the
" syntax group of its kind, in a line of Fly where such a word is used; and
" every word the syntax file lists as a keyword is one the compiler knows.
" The compiler is the one source of truth: a word added to it and not to
" editors/vim/syntax/fly.vim fails here, with the list of missed words.

" Per kind: the syntax groups a word may get, and the highlight groups those
" may link to (so that a word in the right group still shows as its kind).
let s:kinds = {
      \ 'keyword': [['flyKeyword', 'flyStorageClass', 'flyStatement', 'flyConditional',
      \              'flyRepeat', 'flyInclude', 'flyOperatorKeyword'],
      \             ['Keyword', 'StorageClass', 'Statement', 'Conditional', 'Repeat',
      \              'Include', 'Operator']],
      \ 'constant': [['flyBoolean'], ['Boolean']],
      \ 'type': [['flyType'], ['Type']],
      \ 'type-constructor': [['flyTypeConstructor'], ['Type']],
      \ 'builtin-value': [['flyBuiltinValue'], ['Constant']],
      \ 'builtin-function': [['flyBuiltinFunction'], ['Function']],
      \ }

" Where a word is used, '@@' standing for the word; every '@@' is checked.
" Words of the same kind that are used differently have their own line; any
" other word, such as one the compiler learns later, gets its kind's default.
let s:contexts = {
      \ 'keyword': {
      \   'kernel': '@@ scale(X: tensor<f32>, alpha: f32) {}',
      \   'fn': '@@ twice(x) -> i32 { x * 2 }',
      \   'launch': '@@ scale { grid = ceil_div(size(X), 128); block = 128; }',
      \   'const': 'kernel k(@@ BLOCK: int = 128) { @@ TILE = BLOCK * 4; let a = if @@ BLOCK > 64 { 1 } else { 2 }; }',
      \   'let': 'fn f(x) { @@ y = x + 1; @@ (a, _) = (y, 0); a }',
      \   'if': 'fn f(c, a) { @@ c { a } else @@ a > 0 { 1 } else { 0 } }',
      \   'else': 'fn f(c, a) { if c { a } @@ if a > 0 { 1 } @@ { 0 } }',
      \   'for': 'fn f(v) { @@ i in range_const(4) carry (s = 0.0) { yield s + v[i]; } s }',
      \   'in': 'fn f(v) { for i @@ range_const(4) carry (s = 0.0) { yield s + v[i]; } s }',
      \   'carry': 'fn f(v) { for i in range_const(4) @@ (s = 0.0) { yield s + v[i]; } s }',
      \   'yield': 'fn f(v) { for i in range_const(4) carry (s = 0.0) { @@ s + v[i]; } s }',
      \   'return': 'fn f(a, b) { if a > 0 { @@ a; } @@ b; }',
      \   'import': '@@ std.reduce;',
      \   'static_assert': '@@(BLOCK % 32 == 0, "BLOCK must be a multiple of 32");',
      \   'as': 'fn f(x) { (x @@ f16, 255 @@ i8) }',
      \   '': 'fn f(x) { @@ x; }',
      \ },
      \ 'constant': {'': 'const DEBUG = @@; const CHECKED = !@@ && true;'},
      \ 'type': {'': 'fn f(a: @@, b: (@@, i32)) -> @@ { let c: @@ = a as @@; c }'},
      \ 'type-constructor': {
      \   'vec': 'fn f(x) { let v: @@<4, f32> = @@<4, @@<2, f16>>(0.0); v }',
      \   'tensor': 'kernel k(A: @@<f16>, B: @@<f16, (?, ?):(?, 1), align = 16>) {}',
      \   'smem': 'fn f(t: @@<f32, (8, 8):(8, 1)>) { let s = @@<f16>((64, 32):(32, 1)); s }',
      \   'rmem': 'fn f(r: @@<f32, 8:1>) { let x = @@<f32>(4); x }',
      \   '': 'fn f(x: @@<f32>) { @@<f32>(4) }',
      \ },
      \ 'builtin-value': {
      \   'target': 'fn f() { if const @@.vendor == "nvidia" { @@.arch } else { "" } }',
      \   'warp_size': 'fn f(t) { let w = t / @@; (lane + 1) % @@ }',
      \   'lane': 'fn f(x) { shuffle(x, (@@ + 1) % warp_size) + @@ }',
      \   'nv': 'fn f() { mma_atom(@@.mma_sync_16x8x16, f16, f32) }',
      \   'amd': 'fn f() { mma_atom(@@.mfma_16x16x16, f16, f32) }',
      \   '': 'fn f(X) { let i = @@.x * 4 + @@.y; X[i] }',
      \ },
      \ 'builtin-function': {'': 'fn f(x, y) { let r = @@(x, y); let s = @@ (x); x.@@(y) }'},
      \ }

" The words of `flyc vocabulary`, by kind.
function s:Vocabulary() abort
  let output = system(shellescape($FLYC) . ' vocabulary --json')
  call assert_equal(0, v:shell_error, 'flyc vocabulary --json failed: ' . output)
  return json_decode(output)
endfunction

" The groups word gets in its context, checked: [] when right, else the
" description of what it got.
function s:Check(kind, word) abort
  let contexts = s:contexts[a:kind]
  let parts = split(get(contexts, a:word, contexts['']), '@@', 1)
  let line = join(parts, a:word)
  call setline(1, line)
  let [groups, links] = s:kinds[a:kind]
  let wrong = []
  let col = len(parts[0]) + 1
  for part in parts[1:]
    let group = FlySynAt(1, col)
    let shown = synIDattr(synIDtrans(synID(1, col, 1)), 'name')
    let whole = map(range(col, col + len(a:word) - 1), {_, c -> FlySynAt(1, c)})
    if index(groups, group) < 0 || uniq(whole) != [group]
          \ || index(links, FlyLink(group)) < 0
          \ || shown !=# synIDattr(synIDtrans(hlID(FlyLink(group))), 'name')
      call add(wrong, printf('column %d: %s', col, group ==# '' ? 'plain' : join(uniq(whole), '+') . ' -> ' . FlyLink(group)))
    endif
    let col += len(a:word) + len(part)
  endfor
  return empty(wrong) ? [] : [printf('%s %s in %s: %s', a:kind, string(a:word), string(line), join(wrong, ', '))]
endfunction

function Test_every_word_gets_its_kind() abort
  let vocabulary = s:Vocabulary()
  call assert_equal(sort(keys(s:kinds)), sort(keys(vocabulary)), 'the kinds of flyc vocabulary')
  call FlyBuffer([''])
  let missed = []
  let checked = 0
  for [kind, words] in items(vocabulary)
    if !has_key(s:kinds, kind)
      continue
    endif
    for word in words
      let missed += s:Check(kind, word)
      let checked += 1
    endfor
  endfor
  call assert_true(checked > 100, 'flyc vocabulary listed only ' . checked . ' words')
  if !empty(missed)
    call assert_report(len(missed) . ' of ' . checked . " words of flyc vocabulary miss their kind's group in editors/vim/syntax/fly.vim:\n  "
          \ . join(missed, "\n  "))
  endif
endfunction

" The ':' after a name and before any type is an annotation, not the ':' of
" a layout: the syntax file's list of types in flyLayoutOperator must follow
" the vocabulary too.
function Test_annotation_colon_before_every_type() abort
  let vocabulary = s:Vocabulary()
  call FlyBuffer([''])
  let wrong = []
  for word in vocabulary['type'] + vocabulary['type-constructor']
    let line = index(vocabulary['type'], word) >= 0 ? 'let x: ' . word . ' = y;' : 'fn f(x: ' . word . '<f32>) {}'
    call setline(1, line)
    let col = stridx(line, ':') + 1
    if FlySynAt(1, col) !=# ''
      call add(wrong, string(line) . ': ' . FlySynAt(1, col))
    endif
  endfor
  call assert_equal([], wrong, "annotation ':' highlighted as a layout")
endfunction

" What `syntax list` shows after the keywords of a group.
let s:syntax_options = ['contained', 'skipwhite', 'skipnl', 'skipempty', 'transparent',
      \ 'oneline', 'fold', 'display', 'extend', 'excludenl', 'keepend', 'concealends']

" The words a group of the syntax file lists: the keywords `syntax list`
" shows after 'xxx' (one a line after the first, with their options:
" nextgroup=... skipwhite), and the alternatives \%(a\|b\|...\) of its
" match patterns.
function s:ListedWords(group) abort
  let words = []
  for line in filter(split(execute('syntax list ' . a:group), "\n"), {_, l -> l !~# '^---\|links to'})
    let line = substitute(line, '^\s*\%(' . a:group . '\s\+xxx\)\=\s*', '', '')
    if line =~# '^match /'
      let words += split(matchstr(line, '\\%(\zs[^()]*\ze\\)'), '\\|')
    else
      let words += filter(split(line), {_, w -> w =~# '^\h\w*$' && index(s:syntax_options, w) < 0})
    endif
  endfor
  return words
endfunction

" The reverse: a word the syntax file lists as one of the compiler's, which
" the compiler does not know, is a leftover.
function Test_no_word_the_compiler_does_not_know() abort
  let vocabulary = s:Vocabulary()
  let known = []
  for words in values(vocabulary)
    let known += words
  endfor
  call FlyBuffer([''])
  let unknown = []
  let listed = 0
  for group in ['flyKeyword', 'flyStorageClass', 'flyStatement', 'flyConditional', 'flyRepeat',
        \ 'flyInclude', 'flyOperatorKeyword', 'flyBoolean', 'flyType', 'flyTypeConstructor',
        \ 'flyBuiltinValue', 'flyBuiltinFunction']
    for word in s:ListedWords(group)
      let listed += 1
      if index(known, word) < 0
        call add(unknown, group . ' ' . word)
      endif
    endfor
  endfor
  call assert_equal(len(known), listed, 'words the syntax file lists (a word listed twice?), against those of flyc vocabulary')
  call assert_equal([], unknown, 'words of editors/vim/syntax/fly.vim that flyc vocabulary does not list')
endfunction
