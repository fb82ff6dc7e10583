# bash completion for git-apex. git's own completion calls _git_apex for
# `git apex <TAB>`; `git-apex <TAB>` is registered below. Install it as
# completions/git-apex in a directory bash-completion searches (install.sh
# does), or load it with:  source <(git apex completion bash)
_git_apex() {
	local cur=${COMP_WORDS[COMP_CWORD]} i start=0
	# The words after "apex" (git apex ...) or "git-apex".
	for ((i = 0; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		apex | git-apex | */git-apex)
			start=$((i + 1))
			break
			;;
		esac
	done
	local IFS=$'\n'
	COMPREPLY=($(git-apex __complete -- "${COMP_WORDS[@]:start:COMP_CWORD-start}" "$cur" 2>/dev/null))
}
complete -o bashdefault -o default -F _git_apex git-apex
