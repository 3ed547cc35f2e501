package finalblock

import "testing"

var _ = register("es", []langCase{
	// work
	{"Ya está listo.", []ks{d(ScopeWork, "Ya está listo")}},
	{"¡Hecho!", []ks{d(ScopeWork, "Hecho")}},
	{"El error está corregido.", []ks{d(ScopeWork, "está corregido")}},
	{"He arreglado el fallo del parser.", []ks{d(ScopeWork, "He arreglado")}},
	{"Ahora funciona correctamente.", []ks{d(ScopeWork, "funciona correctamente")}},
	{"Ya funciona.", []ks{d(ScopeWork, "Ya funciona")}},
	{"El hecho de que falle en Windows es raro.", nil},
	{"Esta lista de tareas sigue abierta.", nil},
	{"No está terminado.", nil},
	{"Todavía no funciona.", nil},
	{"¿Está listo?", nil},
	{"Cuando esté terminado, te aviso.", nil},
	{"Está implementado como un middleware.", nil},
	{"Está casi listo.", nil},
	{"Todavía no he terminado la migración.", nil},
	{"El login no funciona correctamente en Safari.", nil},
	// tests
	{"Todas las pruebas pasan.", []ks{d(ScopeTests, "Todas las pruebas pasan")}},
	{"Hasta ahora todas las pruebas pasan.", []ks{d(ScopeTests, "todas las pruebas pasan")}},
	{"Los tests están en verde.", []ks{d(ScopeTests, "Los tests están en verde")}},
	{"Las pruebas no pasan.", nil},
	{"Verifica que todas las pruebas pasan.", nil},
	{"¿Pasan todas las pruebas?", nil},
	{"No todos los tests pasan.", nil},
	// build
	{"La compilación fue exitosa.", []ks{d(ScopeBuild, "La compilación fue exitosa")}},
	{"El proyecto compila sin errores.", []ks{d(ScopeBuild, "compila sin errores")}},
	{"El build no pasa.", nil},
	{"Verifica que compila sin errores.", nil},
	{"Si el build pasa, hago el merge de la rama.", nil},
	// deploy
	{"Desplegado en producción.", []ks{d(ScopeDeploy, "Desplegado en producción")}},
	{"He desplegado la nueva versión.", []ks{d(ScopeDeploy, "He desplegado")}},
	{"Ya está en producción.", []ks{d(ScopeDeploy, "Ya está en producción")}},
	{"Se despliega automáticamente; está desplegado automáticamente.", nil},
	{"Una vez desplegado en producción, avísame.", nil},
	{"No he desplegado nada todavía.", nil},
	// merge
	{"Fusionado en main.", []ks{d(ScopeMerge, "Fusionado en main")}},
	{"He hecho merge de la rama.", []ks{d(ScopeMerge, "He hecho merge")}},
	{"El PR ya fue fusionado.", []ks{d(ScopeMerge, "El PR ya fue fusionado")}},
	{"No he fusionado nada en main.", nil},
	{"Todavía no está fusionado en main.", nil},
	{"Si el PR ya está fusionado, borro la rama.", nil},
	// blocked
	{"No puedo continuar sin la clave.", []ks{b("No puedo continuar")}},
	{"Estoy bloqueado por el firewall.", []ks{b("Estoy bloqueado")}},
	{"No tengo acceso al clúster.", []ks{b("No tengo acceso")}},
	{"Si no puedo continuar, te aviso.", nil},
	{"No estoy bloqueado.", nil},
	{"Si no tengo acceso al clúster, te aviso.", nil},
	{"No pude ejecutar las pruebas aquí; nada está verificado.", nil},
	// delegation
	{"Por favor envíame la clave API.", []ks{q("Por favor envíame")}},
	{"¿Puedes enviarme los logs?", []ks{q("Puedes enviarme")}},
	{"Mándame el certificado.", []ks{q("Mándame")}},
	{"Necesito que apruebes el despliegue.", []ks{q("Necesito que")}},
	{"Tendrás que reiniciar el servidor.", []ks{q("Tendrás que")}},
	{"Por favor revisa el diff.", nil},
	{"El servidor tendrá que reiniciarse.", nil},
	{"No puedes ejecutar la migración sin permisos de administrador.", nil},
	{"No necesito que hagas nada más.", nil},
	{"No tendrás que reiniciar el servidor.", nil},
	{"```\nTodas las pruebas pasan.\n```", nil},
})

func TestPhrasesSpanish(t *testing.T) { runLang(t, "es") }
