" Vim indent file
" Language:    Fly, a textual GPU kernel language (*.fly)
" Maintainer:  the Fly project
"
" The indentation of the examples and the standard library:
"   * a line inside { } is indented one 'shiftwidth' past the line that
"     starts the statement holding the '{';
"   * a line inside ( ) or [ ] lines up after the bracket when text follows
"     the bracket on its line, else it is indented one 'shiftwidth' past the
"     statement;
"   * a line that starts with a closing bracket goes back to the statement
"     that opened it;
"   * a statement continued after a binary operator, '=', '->' or 'as', or
"     on a line that starts with one or with '.', 'as', 'in' or 'carry', is
"     indented one 'shiftwidth' more;
"   * inside a block comment, a line starting with '*' lines up under the
"     '*' of the innermost open '/*'; other lines keep their indentation,
"     since they may hold commented-out code.
" Brackets in strings and // comments never count. Those in block comments
" are told apart by the syntax highlighting, so that needs ':syntax on'.

if exists('b:did_indent')
  finish
endif
let b:did_indent = 1

setlocal indentexpr=GetFlyIndent(v:lnum)
setlocal indentkeys=0{,0},0),0],0*,!^F,o,O,e
setlocal autoindent nocindent nosmartindent nolisp

let b:undo_indent = 'setlocal indentexpr< indentkeys< autoindent< cindent< smartindent< lisp<'

if exists('*GetFlyIndent')
  finish
endif

let s:cpo_save = &cpo
set cpo&vim

" The syntax group at line lnum, column col (1-based).
function s:SynName(lnum, col) abort
  return synIDattr(synID(a:lnum, a:col, 1), 'name')
endfunction

" Line lnum with its strings and // comment blanked out, column for column:
" a string becomes 's's and the comment spaces, so brackets and operators in
" them no longer show, and a string still ends a line as a value does.
function s:Code(lnum) abort
  return substitute(getline(a:lnum), '"\%([^"\\]\|\\.\)*"\=\|//.*',
        \ '\=repeat(submatch(0)[0] ==# "/" ? " " : "s", len(submatch(0)))', 'g')
endfunction

" The brackets of line lnum outside strings and comments, as [column, bracket]
" pairs from left to right. Only a buffer with block comments asks the syntax
" engine, which is far slower than the text.
function s:Brackets(lnum) abort
  let line = getline(a:lnum)
  if line !~# '[][(){}]' || line =~# '^\s*//'
    return []
  endif
  let code = s:Code(a:lnum)
  let found = []
  let [b, start, end] = matchstrpos(code, '[][(){}]')
  while start >= 0
    if !s:block_comments || s:SynName(a:lnum, start + 1) !~# 'Comment$'
      call add(found, [start + 1, b])
    endif
    let [b, start, end] = matchstrpos(code, '[][(){}]', end)
  endwhile
  return found
endfunction

" The innermost bracket left open before the start of line lnum, as
" [line, column], or [0, 0] at the top level. The scan stops at s:top, a line
" known to start at the top level.
function s:OpenBracket(lnum) abort
  let depth = 0
  let lnum = a:lnum - 1
  while lnum >= max([s:top, 1])
    for [col, b] in reverse(s:Brackets(lnum))
      if b =~# '[])}]'
        let depth += 1
      elseif depth == 0
        return [lnum, col]
      else
        let depth -= 1
      endif
    endfor
    let lnum -= 1
  endwhile
  return [0, 0]
endfunction

" The indent of the statement that line lnum belongs to: that of the line
" itself, unless it starts inside an open ( or [, or goes on with the
" statement of the previous line; then that line's statement counts instead.
function s:StatementIndent(lnum) abort
  let lnum = a:lnum
  while 1
    let [l, c] = s:OpenBracket(lnum)
    if l > 0 && getline(l)[c - 1] !=# '{'
      let lnum = l
    elseif s:Continues(lnum, l)
      let lnum = s:PrevCode(lnum)
    else
      return indent(lnum)
    endif
  endwhile
endfunction

" The code of line lnum without its comments and trailing blanks.
function s:CodeEnd(lnum) abort
  let code = s:Code(a:lnum)
  if s:block_comments
    " Block comments are the syntax engine's to find.
    let line = getline(a:lnum)
    let in_comment = s:SynName(a:lnum, match(line, '\S') + 1) =~# 'Comment$\|Todo$'
    if in_comment && line !~# '\*/'
      return ''
    elseif in_comment || line =~# '/\*'
      let code = join(map(range(len(code)), {_, i ->
            \ s:SynName(a:lnum, i + 1) =~# 'Comment$\|Todo$' ? ' ' : code[i]}), '')
    endif
  endif
  return substitute(code, '\s\+$', '', '')
endfunction

" The previous line with code: not blank and not only a comment.
function s:PrevCode(lnum) abort
  let lnum = prevnonblank(a:lnum - 1)
  while lnum > 0 && s:CodeEnd(lnum) ==# ''
    let lnum = prevnonblank(lnum - 1)
  endwhile
  return lnum
endfunction

" What leaves an expression unfinished at the end of a line: binary
" operators, '=', '->' and 'as'; and what continues one at the start of the
" next: the same, '.', and the 'in' and 'carry' of a for loop.
let s:trailing_op = '\%([-+*/%&|^<>=:]\|\<as\)$'
let s:leading_op = '^\%([-+*/%&|^<>=:.]\|\%(as\|in\|carry\)\>\)'

" True when line lnum, whose innermost open bracket is on line open (0 at
" the top level), goes on with the statement of the code line before it.
" Comments, a closing bracket, and a '{' on a line of its own start nothing.
function s:Continues(lnum, open) abort
  let text = trim(getline(a:lnum))
  if text =~# '^\%(//\|/\*\|[{}\])]\)'
    return 0
  endif
  let prev = s:PrevCode(a:lnum)
  if prev <= a:open
    return 0
  endif
  let prev_code = s:CodeEnd(prev)
  return prev_code !~# '[;{}]$' && (prev_code =~# s:trailing_op || text =~# s:leading_op)
endfunction

" Inside a block comment opened on an earlier line: the indent under the
" '*' of its innermost open '/*' for a line starting with '*', else the line's
" own; -1 when line lnum is not in one.
function s:CommentIndent(lnum, text) abort
  let first = match(getline(a:lnum), '\S') + 1
  if !s:block_comments || s:SynName(a:lnum, first) !~# '^fly\%(BlockComment\|Todo\)$'
    return -1
  endif
  call cursor(a:lnum, 1)
  let [l, c] = searchpairpos('/\*', '', '\*/', 'bW',
        \ 's:SynName(line("."), col(".")) !=# "flyBlockComment"')
  if l == 0
    return -1
  endif
  return a:text =~# '^\*' ? strdisplaywidth(strpart(getline(l), 0, c - 1)) + 1 : indent(a:lnum)
endfunction

function GetFlyIndent(lnum) abort
  let text = trim(getline(a:lnum))
  let s:block_comments = search('/\*', 'nw') > 0
  " kernel, fn, launch and import appear only at the top level: no bracket
  " before the last of them can be open.
  call cursor(a:lnum, 1)
  let s:top = search('^\s*\%(kernel\|fn\|launch\|import\)\>', 'bnW')

  let comment = s:CommentIndent(a:lnum, text)
  if comment >= 0
    return comment
  endif

  let [l, c] = s:OpenBracket(a:lnum)
  if l > 0 && text =~# '^[])}]'
    return s:StatementIndent(l)
  endif
  if l > 0 && getline(l)[c - 1] !=# '{'
    " Inside ( or [: under the first text after the bracket, if any.
    let after = strpart(getline(l), c)
    if after =~# '^\s*\%(//.*\|/\*.*\)\=$'
      return s:StatementIndent(l) + shiftwidth()
    endif
    return strdisplaywidth(strpart(getline(l), 0, c))
  endif
  let base = l > 0 ? s:StatementIndent(l) + shiftwidth() : 0
  return s:Continues(a:lnum, l) ? base + shiftwidth() : base
endfunction

let &cpo = s:cpo_save
unlet s:cpo_save
