package finalblock

// portuguese is the reviewed Portuguese table (Brazil and Portugal).
var portuguese = langSpec{
	tag: "pt",
	rules: []rule{
		// work
		done(ScopeWork, "(está|estão|ficou|ficaram|já está|tá) (já |tudo |)(pronto|pronta|prontos|prontas)").fin("para"),
		done(ScopeWork, "(está|estão|foi|foram|ficou|ficaram) (já |agora |)(feito|feita|concluído|concluída|concluídos|finalizado|"+
			"finalizada|terminado|terminada|corrigido|corrigida|corrigidos|resolvido|resolvida|implementado|implementada|consertado|"+
			"consertada)").nb("por via com como em"),
		done(ScopeWork, "(concluído|finalizado)").pred(),
		done(ScopeWork, "(corrigi|consertei|resolvi|implementei|finalizei|concluí|terminei)"),
		done(ScopeWork, "funciona (agora|corretamente|bem|de novo|novamente|como esperado)"),
		done(ScopeWork, "(agora|já|tudo) funciona").fin(),
		// tests
		done(ScopeTests, "(todos os |os |)testes (já |agora |)(passam|passaram|estão passando|estão verdes|foram aprovados|estão ok)"),
		// build
		done(ScopeBuild, "(o build|a build|a compilação) (já |agora |)"+
			"(passa|passou|funciona|está verde|foi bem-sucedido|foi bem-sucedida)"),
		done(ScopeBuild, "compila (sem erros|corretamente|sem avisos)"),
		// deploy
		done(ScopeDeploy, "(implantado|implantada|implantei|publicado|publicada|publiquei|deployado|deployei) (em|para|no|na) "+
			"(produção|prod|staging)"),
		done(ScopeDeploy, "(fiz|fizemos) o deploy"),
		done(ScopeDeploy, "(está|estão|foi|foram) (implantado|implantada|em produção|no ar)").nb("por via com como automaticamente"),
		// merge
		done(ScopeMerge, "(mesclado|mesclada|mesclei|mergeado|mergeei|integrado|integrada) (na|no|em|para a|para o|para) "+
			"(main|master|branch main|branch principal)"),
		done(ScopeMerge, "(fiz|fizemos) o (merge|push)"),
		done(ScopeMerge, "(o pr|a pr|o pull request|a branch) (foi|está) (mesclado|mesclada|mergeado|mergeada|integrado|integrada)"),
		// blocked
		blocked("não (consigo|conseguimos|consegui|posso|podemos|pude) (continuar|prosseguir|avançar|seguir)"),
		blocked("(estou|estamos|fiquei|ficamos) (bloqueado|bloqueada|bloqueados|travado|travada|preso|presa)"),
		blocked("não (tenho|temos) (acesso|permissão|permissões|as credenciais|credenciais)"),
		// delegation
		request("por favor (envie|me envie|mande|me mande|forneça|me forneça|compartilhe|execute|rode|adicione|crie|reinicie|instale|" +
			"configure|me passe|passe)"),
		request("(você pode|você poderia|vocês podem|poderia|poderiam) (me enviar|enviar|me mandar|mandar|me passar|fornecer|" +
			"me fornecer|compartilhar|executar|rodar|adicionar|criar|reiniciar|instalar|configurar)").na("eu nós isso ele ela que"),
		request("preciso que (você|vocês)"),
		request("você (precisa|precisará|vai precisar|terá que)"),
	},
	negators:          "não nunca jamais nenhum nenhuma nada sem quase parcialmente nem",
	hypotheticals:     "se quando assim depois antes será serão seria seriam deve devem precisa precisam para verifique confira garanta espero caso",
	hypotheticalPairs: "assim que|depois de|antes de|tem que|para que|a fim|até que",
	imperatives:       "verifique confira execute rode",
	leadIns:           "depois agora primeiro então",
	conjunctions:      "e mas então porque porém embora enquanto logo",
	linking:           "está estão é são foi foram já agora tudo ficou ficaram completamente tá",
	complementizers:   "que",
}
