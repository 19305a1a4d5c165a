" editors.vim.ftdetect: *.fly files get filetype fly, and with it the syntax,
" filetype plugin and indent files of editors/vim.

function Test_existing_file() abort
  execute 'edit' fnameescape(FlySource('examples/01-vector-add.fly'))
  call assert_equal('fly', &filetype)
  call assert_equal('fly', get(b:, 'current_syntax', ''), 'syntax/fly.vim loaded')
  call assert_equal(1, get(b:, 'did_ftplugin', 0), 'ftplugin/fly.vim loaded')
  call assert_equal(1, get(b:, 'did_indent', 0), 'indent/fly.vim loaded')
  call assert_equal('GetFlyIndent(v:lnum)', &indentexpr)
endfunction

function Test_new_file() abort
  execute 'edit' fnameescape($FLY_VIM_WORK . '/not-yet-written.fly')
  call assert_equal('fly', &filetype)
  call assert_equal('fly', get(b:, 'current_syntax', ''))
endfunction

function Test_every_fly_file_of_the_tree() abort
  for file in glob(FlySource('examples') . '/*.fly', 0, 1) + glob(FlySource('stdlib') . '/**/*.fly', 0, 1)
        \ + glob(FlySource('kernels') . '/**/*.fly', 0, 1)
    execute 'edit' fnameescape(file)
    call assert_equal('fly', &filetype, file)
  endfor
endfunction

function Test_other_names_are_not_fly() abort
  for name in ['notes.fly.txt', 'fly', 'kernel.flyb', 'butterfly.c']
    execute 'edit' fnameescape($FLY_VIM_WORK . '/' . name)
    call assert_notequal('fly', &filetype, name)
    bwipeout!
  endfor
endfunction

" A modeline still decides: setfiletype leaves an explicit filetype alone.
function Test_modeline_wins() abort
  let file = $FLY_VIM_WORK . '/modeline.fly'
  call writefile(['// vim: set filetype=c :', 'int main(void) { return 0; }'], file)
  set modeline modelines=5
  execute 'edit' fnameescape(file)
  call assert_equal('c', &filetype)
  set modeline& modelines&
endfunction
