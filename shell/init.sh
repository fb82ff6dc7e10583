# git-apex shell integration (bash, zsh): lets "git apex cd <identity>" and
# "git apex start --cd ..." change this shell's directory. Enable it with
#   eval "$(git apex shell-init bash)"    # or zsh, in ~/.bashrc or ~/.zshrc
git() {
  if [ "${1-}" = apex ] && [ "${2-}" = cd ]; then
    shift 2
    local __git_apex_dir
    __git_apex_dir=$(command git apex path "$@") || return
    builtin cd -- "$__git_apex_dir"
    return
  fi
  if [ "${1-}" = apex ] && [ "${2-}" = start ]; then
    local __git_apex_arg __git_apex_dir
    for __git_apex_arg in "$@"; do
      if [ "$__git_apex_arg" = --cd ]; then
        __git_apex_dir=$(command git "$@") || return
        builtin cd -- "$__git_apex_dir"
        return
      fi
    done
  fi
  command git "$@"
}
