#compdef git-apex
# zsh completion for git-apex. zsh's git completion calls _git-apex for
# `git apex <TAB>`. Install it as _git-apex in a directory on $fpath
# (install.sh does), or load it with:  source <(git apex completion zsh)
_git-apex() {
	local -a candidates
	# words[1] is git-apex, or apex when zsh's git completion called us.
	candidates=("${(@f)$(git-apex __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	if [[ -n ${candidates[1]} ]]; then
		compadd -- "${candidates[@]}"
	else
		_files
	fi
}
# Loaded from $fpath, this file is the body of _git-apex: run it. Sourced,
# it registers the function.
if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
	_git-apex "$@"
elif (( $+functions[compdef] )); then
	compdef _git-apex git-apex
fi
