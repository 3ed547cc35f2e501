package finalblock

import "testing"

var _ = register("fr", []langCase{
	// work
	{"C'est terminé.", []ks{d(ScopeWork, "C'est terminé")}},
	{"Le bug est corrigé.", []ks{d(ScopeWork, "est corrigé")}},
	{"Terminé !", []ks{d(ScopeWork, "Terminé")}},
	{"J'ai corrigé le bug dans le parseur.", []ks{d(ScopeWork, "J'ai corrigé")}},
	{"Le problème a été résolu.", []ks{d(ScopeWork, "a été résolu")}},
	{"Ça marche maintenant.", []ks{d(ScopeWork, "Ça marche maintenant")}},
	{"Tout fonctionne.", []ks{d(ScopeWork, "Tout fonctionne")}},
	{"Ce n'est pas terminé.", nil},
	{"Rien n'est corrigé pour l'instant.", nil},
	{"Ça ne marche pas.", nil},
	{"Ça marche pas encore.", nil},
	{"Est-ce que c'est terminé ?", nil},
	{"Quand ce sera terminé, je vous préviens.", nil},
	{"Le cache est résolu par le middleware.", nil},
	{"C'est presque fini.", nil},
	{"Le travail terminé hier reste à relire.", nil},
	{"Je ne sais pas si j'ai corrigé la bonne cause.", nil},
	{"Si le bug a été corrigé en amont, on peut retirer le contournement.", nil},
	{"Vérifiez que tout fonctionne correctement.", nil},
	// tests
	{"Tous les tests passent.", []ks{d(ScopeTests, "Tous les tests passent")}},
	{"Jusqu'à présent tous les tests passent.", []ks{d(ScopeTests, "tous les tests passent")}},
	{"Les tests unitaires sont au vert.", []ks{d(ScopeTests, "Les tests unitaires sont au vert")}},
	{"Les tests ne passent pas.", nil},
	{"Vérifiez que tous les tests passent.", nil},
	{"Il faut que les tests passent avant la fusion.", nil},
	{"Je ne fusionne pas jusqu'à ce que tous les tests passent.", nil},
	{"Les tests passent-ils ?", nil},
	// build
	{"Le build passe.", []ks{d(ScopeBuild, "Le build passe")}},
	{"Le code compile sans erreur.", []ks{d(ScopeBuild, "compile sans erreur")}},
	{"Le build ne passe pas.", nil},
	{"Si le build passe, on fusionne.", nil},
	{"Vérifiez que le code compile sans erreur.", nil},
	// deploy
	{"Déployé en production.", []ks{d(ScopeDeploy, "Déployé en production")}},
	{"J'ai déployé la nouvelle version.", []ks{d(ScopeDeploy, "J'ai déployé")}},
	{"Le service est maintenant en production.", []ks{d(ScopeDeploy, "est maintenant en production")}},
	{"Le service est déployé automatiquement à chaque fusion.", nil},
	{"Je n'ai pas déployé en production.", nil},
	{"Si nous avons déployé la mauvaise image, il faut revenir en arrière.", nil},
	// merge
	{"Mergé dans main.", []ks{d(ScopeMerge, "Mergé dans main")}},
	{"J'ai fusionné la branche.", []ks{d(ScopeMerge, "J'ai fusionné la branche")}},
	{"La PR a été mergée.", []ks{d(ScopeMerge, "La PR a été mergée")}},
	{"La PR n'a pas été mergée.", nil},
	{"Une fois la PR mergée dans main, on déploie.", nil},
	{"Je n'ai pas vérifié si on a poussé les commits sur le fork.", nil},
	{"Si la PR est mergée avant vendredi, on déploie lundi.", nil},
	// blocked
	{"Je ne peux pas continuer sans la clé.", []ks{b("Je ne peux pas continuer")}},
	{"Je suis bloqué par le VPN.", []ks{b("Je suis bloqué")}},
	{"Je n'ai pas accès au cluster.", []ks{b("Je n'ai pas accès")}},
	{"Je ne suis pas bloqué.", nil},
	{"Si je ne peux pas continuer, je vous préviens.", nil},
	{"Si je n'ai pas accès au cluster, je vous le dirai.", nil},
	{"Si je suis bloqué par le VPN, je vous le signalerai.", nil},
	{"Je n'ai pas pu lancer les tests ici ; rien n'est vérifié.", nil},
	// delegation
	{"Pourriez-vous m'envoyer la clé API ?", []ks{q("Pourriez-vous m'envoyer")}},
	{"Envoyez-moi les logs.", []ks{q("Envoyez-moi")}},
	{"Merci de lancer la migration en prod.", []ks{q("Merci de lancer")}},
	{"J'ai besoin que vous validiez le déploiement.", []ks{q("J'ai besoin que vous")}},
	{"Vous devrez redémarrer le serveur.", []ks{q("Vous devrez")}},
	{"Merci de relire le diff.", nil},
	{"Je n'ai besoin de rien.", nil},
	{"Rien ne dit que vous devrez redémarrer le serveur.", nil},
	{"```\nTous les tests passent.\n```", nil},
})

func TestPhrasesFrench(t *testing.T) { runLang(t, "fr") }
