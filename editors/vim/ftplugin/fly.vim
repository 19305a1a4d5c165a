" Vim filetype plugin file
" Language:    Fly, a textual GPU kernel language (*.fly)
" Maintainer:  the Fly project

if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

let s:cpo_save = &cpo
set cpo&vim

" // line comments, and /* */ block comments with an optional leading '*'.
setlocal commentstring=//\ %s
setlocal comments=s1:/*,mb:*,ex:*/,://
" Wrap comments at 'textwidth', not code; continue a comment on <CR> and o/O;
" let gq format comments; remove the comment leader when joining lines.
setlocal formatoptions-=t formatoptions+=croqlj

let b:undo_ftplugin = 'setlocal commentstring< comments< formatoptions<'

" The project's style, that of the examples and the standard library: four
" spaces a level, no tabs. let g:fly_recommended_style = 0 keeps your own.
if get(g:, 'fly_recommended_style', 1)
  setlocal expandtab shiftwidth=4 softtabstop=4
  let b:undo_ftplugin .= ' expandtab< shiftwidth< softtabstop<'
endif

let &cpo = s:cpo_save
unlet s:cpo_save
