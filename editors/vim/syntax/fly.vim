" Vim syntax file
" Language:    Fly, a textual GPU kernel language (*.fly)
" Maintainer:  the Fly project
"
" The words below are those `flyc vocabulary` prints, kind by kind. The test
" tests/editors/vim/vocabulary.vim fails when the compiler knows a word this
" file does not highlight as its kind, and when this file lists a word the
" compiler does not know. The lexical rules (numbers, strings, nested block
" comments) follow docs/language.md, section 2, and grammar/lexer.re.

if exists('b:current_syntax')
  finish
endif

let s:cpo_save = &cpo
set cpo&vim

" ---- keywords (flyc vocabulary: keyword) ----------------------------------
" kernel, fn and launch are followed by the name they declare.
syn keyword flyKeyword         kernel fn launch nextgroup=flyFunctionName skipwhite skipnl
syn keyword flyKeyword         static_assert require
syn keyword flyStorageClass    const
syn keyword flyStatement       let return yield break continue
syn keyword flyConditional     if else
syn keyword flyRepeat          for while in carry
syn keyword flyInclude         import
syn keyword flyOperatorKeyword as

syn match   flyFunctionName    "\h\w*" contained

" ---- constants (flyc vocabulary: constant) --------------------------------
syn keyword flyBoolean         true false

" ---- types (flyc vocabulary: type, type-constructor) ----------------------
" The fourteen scalar types are reserved; int ... layout are the compile-time
" types, ordinary identifiers to the parser but always types in practice.
syn keyword flyType            i1 i8 i16 i32 i64 index f16 bf16 f32 f64 f8e4m3 f8e5m2 f8e4m3fnuz f8e5m2fnuz
syn keyword flyType            int float bool str tuple type layout
syn keyword flyTypeConstructor vec tensor smem rmem

" ---- builtins (flyc vocabulary: builtin-value, builtin-function) ----------
" The atoms of nv and amd: nv.mma_sync_16x8x16, amd.mfma_16x16x16.
syn match   flyAtom            "\%(\<\%(nv\|amd\)\s*\.\s*\)\@<=\h\w*"

" Values are names, but not after a '.': `x.lane` is a member of x.
" Functions only where they are called, plainly or as a method (t.load()):
" `let shape = ...` names a value, not the builtin.
" BEGIN flyc vocabulary (editors/update-words.py writes these lines)
syn match   flyBuiltinValue    "\.\@1<!\<\%(target\|warp_size\|thread_idx\|block_idx\|block_dim\|grid_dim\|cluster_idx\|cluster_dim\|lane\|nv\|amd\)\>"
syn match   flyBuiltinFunction "\<\%(size\|cosize\|rank\|depth\|shape\|stride\|get\|select\|group\|append\|prepend\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(zip\|flatten\|crd2idx\|idx2crd\|slice\|dice\|coalesce\|filter\|composition\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(complement\|right_inverse\|left_inverse\|logical_divide\|zipped_divide\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(tiled_divide\|flat_divide\|logical_product\|zipped_product\|tiled_product\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(flat_product\|blocked_product\|raked_product\|recast\|swizzle\|make_layout\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(make_ordered_layout\|make_row_major\|max_common_vector\|max_common_layout\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(tv_layout\|take\|basis\|make_basis_like\|make_identity_layout\|coshape\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(shape_div\|elem_less\|product_each\|make_layout_like\|make_fragment_like\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(tile_to_shape\|get_hier_coord\|get_flat_coord\|get_1d_coord\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(make_composed_layout\|composed_inner\|composed_offset\|composed_outer\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(swizzle_bytes\|range\|range_const\|ceil_div\|min\|max\|clamp\|exp\|exp2\|log\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(log2\|sqrt\|rsqrt\|abs\|fma\|floor\|ceil\|trunc\|round\|roundeven\|convert\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(sizeof_bits\|insert\|sum\|bitcast\|where\|barrier\|barrier_arrive\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(cp_async_commit\|cp_async_wait\|mbarrier_init\|mbarrier_arrive\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(mbarrier_arrive_expect_tx\|mbarrier_wait\|fence_proxy_async\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(fence_mbarrier_init\|cluster_sync\|cluster_arrive\|cluster_arrive_relaxed\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(cluster_wait\|block_rank\|cluster_size\|wgmma_fence\|wgmma_commit\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(wgmma_wait\|setmaxnreg_inc\|setmaxnreg_dec\|printf\|sched_barrier\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(sched_group_barrier\|set_prio\|waves_per_eu\|has\|shuffle\|shuffle_xor\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(shuffle_up\|shuffle_down\|vote_any\|vote_all\|ballot\|atomic_add\|atomic_min\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(atomic_max\|atomic_umin\|atomic_umax\|atomic_and\|atomic_or\|atomic_xor\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(atomic_exch\|atomic_cas\|fence\|load\|store\|zeros_like\|universal\|copy_atom\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(tensor_map\|tma_bytes\|tma_load\|tma_store\|tma_store_commit\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(tma_store_wait\|mma_atom\|mma_atom_for\|tiled_copy\|tiled_copy_A\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(tiled_copy_B\|tiled_copy_C\|smem_copy_A\|smem_copy_B\|smem_copy_C\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(tiled_mma\|partition_S\|partition_D\|partition_A\|partition_B\|partition_C\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(partition_fragment_A\|partition_fragment_B\|partition_fragment_C\|retile\)\ze\s*("
syn match   flyBuiltinFunction "\<\%(make_identity_tensor\|copy\|gemm\)\ze\s*("
" END flyc vocabulary

" The fields of a launch block, launch k { grid = ...; block = ...; shared
" = ...; }: a name set with '=' at the start of a line or after '{' or ';'
" (a named argument follows '(' or ',').
syn match   flyLaunchField     "\%(^\|[{;]\)\s*\zs\<\%(grid\|block\|shared\)\>\ze\s*=\%([^=]\|$\)"

" ---- layouts ----------------------------------------------------------------
" The ':' of shape:stride, as in (8, 16):(1, 8) and tile:1. A ':' followed by
" a type is an annotation instead (x: f32, A: tensor<...>, p: (i32, f32)).
syn match   flyLayoutOperator  ":\%(\s*(*\s*\%(i1\|i8\|i16\|i32\|i64\|index\|f16\|bf16\|f32\|f64\|f8e4m3\|f8e5m2\|f8e4m3fnuz\|f8e5m2fnuz\|int\|float\|bool\|str\|tuple\|type\|layout\|vec\|tensor\|smem\|rmem\)\>\)\@!"
" '?': a value known only at run time, (?, ?):(?, 1); '_': a whole mode in
" an index, t[_, i], or a discarded value in a pattern.
syn match   flyUnknown         "?"
syn match   flyUnderscore      "\<_\>"

" ---- numbers (docs/language.md 2.5, 2.6) -----------------------------------
" What starts with a digit and is not a number is a malformed one (10u, 1_,
" 0.5f), as the lexer reports it; the valid forms come after, so they win.
syn match   flyNumberError     "\<\d\w*"
syn match   flyNumber          "\<\d\+\%(_\+\d\+\)*\>"
syn match   flyNumber          "\<0x\x\+\%(_\+\x\+\)*\>"
syn match   flyNumber          "\<0b[01]\+\%(_\+[01]\+\)*\>"
syn match   flyFloat           "\<\d\+\%(_\+\d\+\)*\.\d\+\%(_\+\d\+\)*\%([eE][+-]\=\d\+\%(_\+\d\+\)*\)\=\>"
syn match   flyFloat           "\<\d\+\%(_\+\d\+\)*[eE][+-]\=\d\+\%(_\+\d\+\)*\>"

" ---- strings (docs/language.md 2.8) ----------------------------------------
" A string ends on the line it starts. \x goes up to \x7F only.
syn region  flyString          start=+"+ skip=+\\\\\|\\"+ end=+"\|$+ contains=flyEscape,flyEscapeError
syn match   flyEscapeError     +\\.\=+ contained
syn match   flyEscape          +\\[ntr0\\"]+ contained
syn match   flyEscape          +\\x[0-7]\x+ contained
syn match   flyEscape          +\\u{\x\{1,6}}+ contained

" ---- what the lexer refuses -------------------------------------------------
" Fly has no character literals, and these characters are no tokens.
syn match   flyStrayError      "'[^'\n]*'\|[@#$`'\\]"

" ---- comments (docs/language.md 2.2) ---------------------------------------
" Block comments nest: /* a /* b */ still a */.
syn keyword flyTodo            TODO FIXME XXX NOTE contained
syn region  flyLineComment     start="//" end="$" contains=flyTodo,@Spell
syn region  flyBlockComment    start="/\*" end="\*/" contains=flyBlockComment,flyTodo,@Spell

" Nesting makes a comment's extent depend on everything before it.
syn sync fromstart

hi def link flyKeyword         Keyword
hi def link flyStorageClass    StorageClass
hi def link flyStatement       Statement
hi def link flyConditional     Conditional
hi def link flyRepeat          Repeat
hi def link flyInclude         Include
hi def link flyOperatorKeyword Operator
hi def link flyFunctionName    Function
hi def link flyBoolean         Boolean
hi def link flyType            Type
hi def link flyTypeConstructor Type
hi def link flyBuiltinValue    Constant
hi def link flyAtom            Constant
hi def link flyBuiltinFunction Function
hi def link flyLaunchField     Identifier
hi def link flyLayoutOperator  Operator
hi def link flyUnknown         Special
hi def link flyUnderscore      Special
hi def link flyNumberError     Error
hi def link flyNumber          Number
hi def link flyFloat           Float
hi def link flyString          String
hi def link flyEscape          SpecialChar
hi def link flyEscapeError     Error
hi def link flyStrayError      Error
hi def link flyTodo            Todo
hi def link flyLineComment     Comment
hi def link flyBlockComment    Comment

let b:current_syntax = 'fly'

let &cpo = s:cpo_save
unlet s:cpo_save
