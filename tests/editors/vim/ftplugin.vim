" editors.vim.ftplugin: the options editors/vim/ftplugin/fly.vim sets, that
" b:undo_ftplugin takes them back, and what they do: comments continued and
" formatted with their leader.

function Test_options() abort
  call FlyBuffer(['fn f() {}'])
  call assert_equal('// %s', &commentstring)
  call assert_equal('s1:/*,mb:*,ex:*/,://', &comments)
  for flag in ['c', 'r', 'o', 'q', 'l', 'j']
    call assert_match(flag, &formatoptions, "formatoptions has '" . flag . "'")
  endfor
  call assert_notmatch('t', &formatoptions, 'formatoptions wraps no code')
  call assert_equal([1, 4, 4], [&expandtab, &shiftwidth, &softtabstop])
  call assert_match('commentstring<', get(b:, 'undo_ftplugin', ''))
endfunction

function Test_own_style_kept() abort
  let g:fly_recommended_style = 0
  try
    call FlyBuffer(['fn f() {}'])
    call assert_equal([&g:expandtab, &g:shiftwidth, &g:softtabstop], [&expandtab, &shiftwidth, &softtabstop])
    call assert_equal('// %s', &commentstring)
  finally
    unlet g:fly_recommended_style
  endtry
endfunction

" Another filetype runs b:undo_ftplugin and b:undo_indent: every option the
" fly files set is back to its global value.
function Test_undo() abort
  call FlyBuffer(['fn f() {}'])
  let options = ['commentstring', 'comments', 'formatoptions', 'expandtab', 'shiftwidth',
        \ 'softtabstop', 'indentexpr', 'indentkeys', 'autoindent', 'cindent', 'smartindent', 'lisp']
  set filetype=none_such
  for option in options
    call assert_equal(eval('&g:' . option), eval('&l:' . option), option . ' after undo')
  endfor
  call assert_false(exists('b:did_ftplugin') || exists('b:did_indent'))
endfunction

" gq wraps a long // comment at 'textwidth', each line with its leader.
function Test_format_line_comment() abort
  call FlyBuffer(['fn f() {', '    // one two three four five six seven eight nine ten eleven twelve', '}'])
  setlocal textwidth=40
  normal! 2Ggqq
  call assert_equal(['fn f() {',
        \ '    // one two three four five six seven',
        \ '    // eight nine ten eleven twelve', '}'], getline(1, '$'))
endfunction

" o and <CR> continue a comment; J joins two comment lines without the leader.
function Test_continue_and_join_comments() abort
  call FlyBuffer(['fn f() {', '    // first', '}'])
  execute "normal! 2GAsecond\<CR>third"
  call assert_equal(['fn f() {', '    // firstsecond', '    // third', '}'], getline(1, '$'))
  normal! 2Gofourth
  call assert_equal('    // fourth', getline(3))
  normal! 2GJ
  call assert_equal('    // firstsecond fourth', getline(2))
  " After ' * ', typing '/' ends the comment: ' */'.
  call FlyBuffer(['/* first'])
  execute "normal! osecond\<CR>/"
  call assert_equal(['/* first', ' * second', ' */'], getline(1, '$'))
endfunction

" Code is not wrapped while typing, comments are.
function Test_textwidth_wraps_comments_only() abort
  call FlyBuffer([''])
  setlocal textwidth=30
  execute "normal! ilet total = alpha + beta + gamma + delta + epsilon;"
  call assert_equal(['let total = alpha + beta + gamma + delta + epsilon;'], getline(1, '$'))
  call FlyBuffer([''])
  setlocal textwidth=30
  execute "normal! i// alpha beta gamma delta epsilon zeta"
  call assert_equal(['// alpha beta gamma delta', '// epsilon zeta'], getline(1, '$'))
endfunction
