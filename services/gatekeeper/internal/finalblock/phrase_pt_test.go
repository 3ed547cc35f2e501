package finalblock

import "testing"

//nolint:misspell // the words are another language's
var _ = register("pt", []langCase{
	// work
	{"Está pronto.", []ks{d(ScopeWork, "Está pronto")}},
	{"O bug foi corrigido.", []ks{d(ScopeWork, "foi corrigido")}},
	{"Concluído.", []ks{d(ScopeWork, "Concluído")}},
	{"Corrigi o erro no parser.", []ks{d(ScopeWork, "Corrigi")}},
	{"Agora funciona corretamente.", []ks{d(ScopeWork, "funciona corretamente")}},
	{"Tudo funciona.", []ks{d(ScopeWork, "Tudo funciona")}},
	{"Pronto, vou explicar o que mudou.", nil},
	{"Não está pronto.", nil},
	{"Ainda não funciona.", nil},
	{"Está pronto?", nil},
	{"Quando estiver pronto, aviso.", nil},
	{"Foi implementado como middleware.", nil},
	{"Está quase pronto.", nil},
	{"Quase concluído: falta só a documentação.", nil},
	{"Não corrigi o teste instável.", nil},
	{"O login não funciona corretamente no Safari.", nil},
	// tests
	{"Todos os testes passam.", []ks{d(ScopeTests, "Todos os testes passam")}},
	{"Os testes estão passando.", []ks{d(ScopeTests, "Os testes estão passando")}},
	{"Os testes não passam.", nil},
	{"Verifique se todos os testes passam.", nil},
	// build
	{"O build passou.", []ks{d(ScopeBuild, "O build passou")}},
	{"O projeto compila sem erros.", []ks{d(ScopeBuild, "compila sem erros")}},
	{"A compilação não passa.", nil},
	{"Verifique se compila sem erros.", nil},
	{"Verifique se o build passa no CI antes do merge.", nil},
	// deploy
	{"Implantado em produção.", []ks{d(ScopeDeploy, "Implantado em produção")}},
	{"Fiz o deploy da nova versão.", []ks{d(ScopeDeploy, "Fiz o deploy")}},
	{"O serviço já está no ar.", []ks{d(ScopeDeploy, "está no ar")}},
	{"O serviço foi implantado automaticamente pelo CI.", nil},
	{"Não fiz o deploy.", nil},
	{"Ainda não foi implantado em produção.", nil},
	// merge
	{"Mesclado na main.", []ks{d(ScopeMerge, "Mesclado na main")}},
	{"Fiz o merge da branch.", []ks{d(ScopeMerge, "Fiz o merge")}},
	{"O PR foi mesclado.", []ks{d(ScopeMerge, "O PR foi mesclado")}},
	{"Depois de mesclado na main, faço o deploy.", nil},
	{"Ainda não fiz o merge da branch.", nil},
	{"Se o PR foi mesclado, apago a branch.", nil},
	// blocked
	{"Não consigo continuar sem a chave.", []ks{b("Não consigo continuar")}},
	{"Estou bloqueado pelo firewall.", []ks{b("Estou bloqueado")}},
	{"Não tenho acesso ao cluster.", []ks{b("Não tenho acesso")}},
	{"Até agora não consegui avançar sem a chave.", []ks{b("não consegui avançar")}},
	{"Se eu não conseguir continuar, aviso.", nil},
	{"Não consegui rodar os testes aqui; nada foi verificado.", nil},
	{"Não estou bloqueado; só falta a revisão do PR.", nil},
	{"Se não tenho acesso ao cluster, o deploy passa pelo CI.", nil},
	// delegation
	{"Por favor envie a chave da API.", []ks{q("Por favor envie")}},
	{"Você pode me enviar os logs?", []ks{q("Você pode me enviar")}},
	{"Preciso que você aprove o deploy.", []ks{q("Preciso que você")}},
	{"Você vai precisar reiniciar o servidor.", []ks{q("Você vai precisar")}},
	{"Eu poderia executar os testes depois.", nil},
	{"O script pode executar comandos.", nil},
	{"Por favor revise o diff.", nil},
	{"Não preciso que você faça nada.", nil},
	{"```\nTodos os testes passam.\n```", nil},
})

func TestPhrasesPortuguese(t *testing.T) { runLang(t, "pt") }
