# bash completion for strata (installed as share/bash-completion/completions/strata).
# Verbs and options come from the binary itself (strata list verbs, strata
# help VERB), so they never drift from it; --hw, --model and --stack complete the shipped
# names (strata list configs|systems|models|stacks), other values complete files.
_strata()
{
    local cur prev verb opts
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$(strata list verbs 2>/dev/null) help version" -- "$cur"))
        return
    fi
    verb=${COMP_WORDS[1]}
    case "$verb" in
    list)
        COMPREPLY=($(compgen -W "$(strata help list 2>/dev/null | awk '/strata list/ {print $NF}' | tr '|' ' ')" -- "$cur")); return ;;
    help)
        COMPREPLY=($(compgen -W "$(strata list verbs 2>/dev/null)" -- "$cur")); return ;;
    esac
    case "$prev" in
    --hw)
        COMPREPLY=($(compgen -W "$(strata list configs 2>/dev/null | awk 'NR>1 {print $1}') $(strata list systems 2>/dev/null | awk 'NR>1 {print "systems/" $1}')" -- "$cur"))
        compopt -o filenames 2>/dev/null; COMPREPLY+=($(compgen -f -- "$cur")); return ;;
    --model)
        COMPREPLY=($(compgen -W "$(strata list models 2>/dev/null | awk 'NR>1 {print $1}')" -- "$cur"))
        COMPREPLY+=($(compgen -f -- "$cur")); return ;;
    --stack)
        COMPREPLY=($(compgen -W "$(strata list stacks 2>/dev/null | awk 'NR>1 {print $1}')" -- "$cur"))
        COMPREPLY+=($(compgen -f -- "$cur")); return ;;
    --dtype|--kv-dtype)
        COMPREPLY=($(compgen -W "$(strata list dtypes 2>/dev/null | awk 'NR>1 && $1 != "aliases:" {print $1}')" -- "$cur")); return ;;
    --weights)
        COMPREPLY=($(compgen -W "$(strata list formats 2>/dev/null | awk 'NR>1 {print $1}')" -- "$cur")); return ;;
    --phase)
        COMPREPLY=($(compgen -W "decode prefill train" -- "$cur")); return ;;
    --trace|--data|--spec|--json|--csv|--out|--output|-o|--report|--hw-overlay|-c|-t|-p)
        COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ "$cur" == -* ]]; then
        [ "$verb" = gen ] && verb="gen"
        opts=$(strata help "$verb" 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
        COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _strata strata
